#!/bin/sh
# Builds everything the GPU suite needs on this (Debian, Rust) machine and packs it into one folder,
# gpu-pack/ in the repository root (git-ignored): the build, the programs, the scripts, and in
# gpu-pack/debs the Vulkan/GL loader packages an NVIDIA machine may lack. Copy gpu-pack into the
# repository root on your NVIDIA machine, which needs no Rust, and run `sh gpu-pack/run.sh` there
# (docs/gpu.md, "Running the GPU suite on your NVIDIA machine").
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
# What building needs beyond the main job's packages (scripts/deps.sh): the probe links the Vulkan
# loader, and strip comes with binutils. Installed here on a fresh machine, sudo only when not root.
scripts/deps.sh
missing=""
for p in libvulkan-dev binutils; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "pack: installing$missing"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086 # a word list
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
out=gpu-pack
debs=$out/debs
make --no-print-directory stage
make --no-print-directory -C tests/conformance all STAGE="$root/build/stage"
make --no-print-directory -C tests/gpu probe
make --no-print-directory -C tests/platform
# A fresh pack each time, but the loader packages stay: they are downloaded once.
if [ -d "$out" ]; then find "$out" -mindepth 1 -maxdepth 1 ! -name debs -exec rm -rf {} +; fi
mkdir -p "$out/lib" "$out/bin" "$out/conformance"
cp build/stage/lib/libdxcl_d3d.so build/stage/lib/libdxcl_layer.so build/platform/libcrashtrace.so "$out/lib/"
cp build/stage/bin/dxcl build/gpu/probe build/platform/failed_event "$out/bin/"
# The GPU machine's default libOpenCL.so.1 may be a loader without layer support (CUDA's copy):
# pack this machine's ocl-icd, which loads OPENCL_LAYERS and honours OCL_ICD_VENDORS.
cp -L "$(ldconfig -p | sed -n 's/.*libOpenCL.so.1 (libc6,x86-64) => //p' | head -1)" "$out/lib/libOpenCL.so.1"
cp tests/conformance/run.sh "$out/conformance/"
for p in discovery contexts buffers textures acquire sync threads hostptr; do cp "build/conformance/$p" "$out/conformance/"; done
cp scripts/gpu/run.sh scripts/gpu/stacks.sh scripts/gpu/compare.sh "$out/"
# The layer's unit tests, whose idle hand-off test compare.sh times on the GPU machine's own CPU
# (docs/benchmarks.md, "A cold CPU on demand").
tests=$(cargo test --release -q -p dxcl-layer --lib --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
strip --strip-debug -o "$out/bin/idle-test" "$tests"
# Debug info is not needed there; stripped, the pack stays small to copy.
strip --strip-debug "$out"/lib/*.so "$out"/bin/* "$out"/conformance/discovery "$out"/conformance/contexts \
    "$out"/conformance/buffers "$out"/conformance/textures "$out"/conformance/acquire "$out"/conformance/sync \
    "$out"/conformance/threads "$out"/conformance/hostptr
# DXVK-native, when it was built here (scripts/dxvk/build.sh, docs/dxvk.md): its
# libraries, the headless stand-in for SDL2 (the GPU machine has no X server and no SDL2), dxcl's
# Vulkan layer, and the DXVK suite's programs. run.sh's "dxvk" part runs them.
if [ -e build/dxvk/lib/libdxvk_d3d11.so ]; then
    scripts/dxvk/test.sh --build-only
    d=$out/dxvk
    mkdir -p "$d/lib" "$d/conformance"
    for f in build/dxvk/lib/libdxvk_*.so build/dxvk-tests/headless/libSDL2-2.0.so.0 \
        target/release/libdxcl_vk_layer.so; do
        strip --strip-debug -o "$d/lib/$(basename "$f")" "$f"
    done
    for f in build/dxvk-tests/foreign build/dxvk-tests/vk_layer build/dxvk-tests/shared_texture \
        build/dxvk-tests/handoff_bench; do
        strip --strip-debug -o "$d/$(basename "$f")" "$f"
    done
    for p in discovery contexts buffers textures acquire sync; do
        strip --strip-debug -o "$d/conformance/$p" "build/dxvk-tests/conformance/$p"
    done
    cp tests/conformance/run.sh "$d/conformance/"
    cp crates/dxcl-vk-layer/dxcl_external_fd.json.in "$d/"
else
    echo "pack: no DXVK build in build/dxvk: the GPU suite's dxvk part will say SKIPPED (docs/dxvk.md)"
fi
if ! ls "$debs"/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p "$debs" /tmp/amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    # shellcheck disable=SC2086 # $o is a word list
    apt-get $o update -q >/dev/null
    # shellcheck disable=SC2086
    (cd "$debs" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
du -sh "$out"
echo "packed: copy $out into the NVIDIA machine's checkout and run there: sh $out/run.sh"
