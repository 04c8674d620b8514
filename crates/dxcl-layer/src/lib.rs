//! OpenCL layer.
