#!/usr/bin/env bash
# scripts/package/build.sh deb|dist: dxcl's packages for users without a Rust toolchain (docs/install.md).
#
#   deb   build/package/dxcl_VERSION_amd64.deb (the runtime, the OpenCL layer, the Vulkan layer and
#         its manifest, headers, pkg-config file, the dxcl command and its man page) and
#         build/package/dxcl-wine_VERSION_amd64.deb (the Wine bridge, which depends on Wine), made
#         with dpkg-deb from `make install PREFIX=/usr`; then lintian, whose remaining tags are
#         each explained in scripts/package/lintian-overrides.
#   dist  build/package/dxcl-VERSION-x86_64-linux.tar.xz: the same files under dxcl-VERSION/, bin/dxcl
#         finding its libraries and the bridge relative to itself, dxcl.pc and the Vulkan manifest
#         relative to their own place, and a README with the one command to use it.
#
# Run by `make deb` and `make dist`, which build and install first. Installs its own Debian
# packages (dpkg-dev, help2man, lintian, xz-utils), with sudo only when not root.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
mode=${1:?usage: build.sh deb|dist}
. scripts/install-debs.sh
install_debs package dpkg-dev help2man lintian xz-utils fakeroot

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
maintainer="The dxcl developers <dxcl@dxcl.invalid>"
# The date of the commit packaged, so that two builds of one commit are the same.
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
out=$root/build/package
work=$out/work-$mode
rm -rf "$work"
mkdir -p "$work" "$out"

# The installed tree under PREFIX, stripped (the release build keeps debug info for profiling).
install_tree() {
    local prefix=$1 dest=$2
    make -s --no-print-directory install PREFIX="$prefix" DESTDIR="$dest" >/dev/null
    find "$dest" -name '*.so' -path '*/lib/*' ! -path '*/wine/*' -exec strip --strip-unneeded {} +
    strip --strip-unneeded "$dest$prefix/bin/dxcl" "$dest$prefix/lib/dxcl/wine/x86_64-unix/dxclcl.so"
}

# The man page, from the program's own --help and --version.
man_page() {
    help2man --no-info --section=1 --version-string="$version" \
        --name="Direct3D 10/11 and OpenCL sharing on Linux: information, demo, benchmarks, Wine bridge" \
        --include=scripts/package/dxcl.h2m "$root/target/release/dxcl"
}

if [ "$mode" = dist ]; then
    name=dxcl-$version
    tree=$work/$name
    install_tree "" "$tree"
    # Relative to their own place, so the folder can go anywhere.
    sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$tree/lib/pkgconfig/dxcl.pc"
    sed -i 's|"library_path": ".*"|"library_path": "../../../lib/libdxcl_vk_layer.so"|' \
        "$tree/share/vulkan/explicit_layer.d/dxcl_external_fd.json"
    mkdir -p "$tree/share/man/man1"
    man_page | gzip -9n > "$tree/share/man/man1/dxcl.1.gz"
    sed "s/@VERSION@/$version/g" scripts/package/dist-README > "$tree/README"
    cp CHANGELOG.md "$tree/"
    tar -C "$work" --owner=0 --group=0 --sort=name -cJf "$out/$name-x86_64-linux.tar.xz" "$name"
    echo "dist: $out/$name-x86_64-linux.tar.xz"
    exit 0
fi

# --- deb ---------------------------------------------------------------------------------------
all=$work/all
install_tree /usr "$all"
doc() {
    local pkg=$1 dir=$2
    mkdir -p "$dir/usr/share/doc/$pkg"
    cp scripts/package/copyright "$dir/usr/share/doc/$pkg/copyright"
    gzip -9n < CHANGELOG.md > "$dir/usr/share/doc/$pkg/CHANGELOG.md.gz"
    # A native package's changelog.gz is read as Debian's changelog format: one entry per version,
    # pointing at the project's own.
    printf '%s (%s) unstable; urgency=medium\n\n  * dxcl %s; what changed is in CHANGELOG.md.gz beside this file.\n\n -- %s  %s\n' \
        "$pkg" "$version" "$version" "$maintainer" "$date" | gzip -9n > "$dir/usr/share/doc/$pkg/changelog.gz"
    mkdir -p "$dir/usr/share/lintian/overrides"
    sed -n "s/^$pkg: /$pkg: /p" scripts/package/lintian-overrides > "$dir/usr/share/lintian/overrides/$pkg"
    [ -s "$dir/usr/share/lintian/overrides/$pkg" ] || rm -r "$dir/usr/share/lintian"
}

# dxcl: everything but the Wine bridge.
main=$work/dxcl
mkdir -p "$main"
cp -a "$all/." "$main/"
rm -rf "$main/usr/lib/dxcl"
mkdir -p "$main/usr/share/man/man1"
man_page | gzip -9n > "$main/usr/share/man/man1/dxcl.1.gz"
doc dxcl "$main"
# dxcl-wine: the bridge's files, where `dxcl wine` looks for them (lib/dxcl/wine beside bin/).
# Wine maps its Windows DLLs as data: they need no execute bit.
wine=$work/dxcl-wine
mkdir -p "$wine/usr/lib"
cp -a "$all/usr/lib/dxcl" "$wine/usr/lib/"
find "$wine" \( -name '*.dll' -o -name '*.exe' \) -exec chmod 644 {} +
doc dxcl-wine "$wine"

# Dependencies of the ELF files, from the libraries' own records (dpkg-shlibdeps needs a control
# file to read).
mkdir -p "$work/shlibs/debian"
printf 'Source: dxcl\n\nPackage: dxcl\nArchitecture: amd64\n' > "$work/shlibs/debian/control"
shlibs() {
    (cd "$work/shlibs" && dpkg-shlibdeps -O "$@" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
}
main_depends=$(shlibs "$main/usr/bin/dxcl" "$main"/usr/lib/*.so)
wine_depends=$(shlibs "$wine/usr/lib/dxcl/wine/x86_64-unix/dxclcl.so")

size() { du -sk --exclude=DEBIAN "$1" | cut -f1; }
control() {
    local dir=$1
    mkdir -p "$dir/DEBIAN"
    cat > "$dir/DEBIAN/control"
    (cd "$dir" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$dir/DEBIAN/md5sums"
}
control "$main" <<EOF
Package: dxcl
Version: $version
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $(size "$main")
Depends: $main_depends
Recommends: pocl-opencl-icd | opencl-icd, libvulkan1, mesa-vulkan-drivers | vulkan-icd
Suggests: dxcl-wine
Section: libs
Priority: optional
Description: Direct3D 10/11 and OpenCL memory sharing on Linux
 dxcl adds the OpenCL Direct3D sharing extensions (cl_khr_d3d10_sharing,
 cl_khr_d3d11_sharing, cl_nv_d3d10_sharing, cl_nv_d3d11_sharing) to every
 OpenCL platform through an OpenCL layer, and brings a Direct3D 10/11 runtime
 for Linux with the COM ABI and C/C++ headers, so that programs create OpenCL
 buffers and images from Direct3D buffers and textures.
 .
 This package holds the runtime, the OpenCL layer, a Vulkan layer and its
 manifest, the headers, the pkg-config file and the dxcl command.
EOF
control "$wine" <<EOF
Package: dxcl-wine
Version: $version
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $(size "$wine")
Depends: dxcl (= $version), wine64 (>= 8.0~) | wine (>= 8.0~), $wine_depends
Section: otherosfs
Priority: optional
Description: Direct3D and OpenCL sharing for Windows programs under Wine
 dxcl's Wine bridge gives 64-bit Windows programs run by Wine 8.0 or later the
 OpenCL Direct3D sharing extensions on their own Direct3D 10/11 devices,
 through the host's OpenCL with dxcl's layer. Install it into a Wine prefix
 with "dxcl wine install PREFIX".
EOF
for pkg in dxcl dxcl-wine; do
    dpkg-deb --root-owner-group -Zxz --build "$work/$pkg" "$out/${pkg}_${version}_amd64.deb" >/dev/null
    echo "deb: $out/${pkg}_${version}_amd64.deb"
done
# Every tag lintian still reports is explained in scripts/package/lintian-overrides (installed as
# the package's overrides); anything else fails the build.
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$out/dxcl_${version}_amd64.deb" \
    "$out/dxcl-wine_${version}_amd64.deb"
