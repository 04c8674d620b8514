// One texel per invocation from a 2D storage image region into another. Built once per storage
// format the backend copies this way (FORMAT, IMAGE: scripts/shaders.sh), each a GLSL format that
// loads and stores bit for bit and needs no extended-formats feature. Rebuild the SPIR-V with
// scripts/shaders.sh after a change.
#version 450

layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, FORMAT) readonly uniform IMAGE src;
layout(binding = 1, FORMAT) writeonly uniform IMAGE dst;
layout(push_constant) uniform Region {
    ivec2 src_origin;
    ivec2 dst_origin;
    uvec2 extent;
} region;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= region.extent.x || p.y >= region.extent.y) {
        return;
    }
    imageStore(dst, region.dst_origin + ivec2(p), imageLoad(src, region.src_origin + ivec2(p)));
}
