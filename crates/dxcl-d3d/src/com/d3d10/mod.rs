//! The Direct3D 10 faces (ID3D10Device1, ID3D10Buffer, ID3D10Texture1D/2D/3D, ID3D10Query, ...)
//! of the objects in `com::device`, `com::resource` and `com::query`. To be written on top of the
//! framework: see the crate report for the recipe. Intentionally empty for now.
