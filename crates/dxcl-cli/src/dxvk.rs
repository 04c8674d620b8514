//! DXVK-native's DXGI, loaded at run time for `dxcl info`: the library `DXCL_DXVK_LIB` names
//! (the file, or the folder holding `libdxvk_dxgi.so`), its factory and adapters, reached only
//! through the standard COM ABI (`CreateDXGIFactory1`, `EnumAdapters1`).
//!
//! DXVK-native's SDL2 window-system integration asks SDL for Vulkan's instance extensions when
//! the factory is made, which needs SDL's video subsystem: it is started here when DXVK's library
//! brought SDL2 in and nobody started it (an X or Wayland display is then needed). DXVK's log goes
//! to the terminal at `error` level and to no file unless `DXVK_LOG_LEVEL` / `DXVK_LOG_PATH` say
//! otherwise (DXVK-native writes `<program>_dxgi.log` into the current folder by default).

use crate::d3d::{check, Com, HrError};
use dxcl_abi::*;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

/// The environment variable that names DXVK-native's DXGI library.
pub const ENV: &str = "DXCL_DXVK_LIB";

/// `SDL_INIT_VIDEO`.
const SDL_INIT_VIDEO: u32 = 0x20;

/// DXVK-native's DXGI, loaded, with its factory.
pub struct Dxvk {
    /// The library file loaded.
    pub path: PathBuf,
    /// Declared before `_sdl`: fields drop in order, so DXVK's factory (and its Vulkan instance)
    /// goes before SDL's video subsystem stops.
    pub factory: Com<IDXGIFactory1>,
    _sdl: SdlVideo,
}

/// What this module started of SDL: undone on drop (the Vulkan library it loaded, then the video
/// subsystem if it started that).
#[derive(Default)]
struct SdlVideo {
    unload_vulkan: Option<unsafe extern "C" fn()>,
    quit: Option<unsafe extern "C" fn()>,
}

impl Drop for SdlVideo {
    fn drop(&mut self) {
        if let Some(unload) = self.unload_vulkan {
            // SAFETY: pairs with the SDL_Vulkan_LoadLibrary of `start_sdl_video`; DXVK's own
            // load holds the library as long as DXVK needs it (SDL counts loads).
            unsafe { unload() };
        }
        if let Some(quit) = self.quit {
            // SAFETY: SDL was started by `open`, and DXVK's objects that use it are gone.
            unsafe { quit() };
        }
    }
}

/// The last `dlerror()` text.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Where `DXCL_DXVK_LIB` points: the file itself, or `libdxvk_dxgi.so` in the folder it names.
pub fn library_path(value: &Path) -> PathBuf {
    if value.is_dir() {
        value.join("libdxvk_dxgi.so")
    } else {
        value.to_path_buf()
    }
}

/// Sets a DXVK environment variable unless the user did.
fn default_env(name: &str, value: &str) {
    if std::env::var_os(name).is_none() {
        std::env::set_var(name, value);
    }
}

/// Starts SDL's video subsystem if DXVK's library brought SDL2 in and it is not running, and
/// loads SDL's Vulkan library, which DXVK's SDL2 integration also does but without checking:
/// with a video driver that has no Vulkan (no display: SDL 2.26 then may start KMSDRM or
/// offscreen), DXVK's next SDL call jumps to a null function. The check turns that into an error.
fn start_sdl_video() -> Result<SdlVideo, String> {
    // SAFETY: dlopen with a valid C string; RTLD_NOLOAD only finds SDL2 if DXVK's library
    // brought it in (a GLFW build of DXVK does not). The handle stays open with the process.
    let sdl = unsafe {
        libc::dlopen(
            c"libSDL2-2.0.so.0".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_NOLOAD,
        )
    };
    let mut started = SdlVideo::default();
    if sdl.is_null() {
        return Ok(started);
    }
    let sym = |name: &CStr| {
        // SAFETY: a live handle and a valid C string.
        let p = unsafe { libc::dlsym(sdl, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let (
        Some(was_init),
        Some(init),
        Some(quit),
        Some(error),
        Some(load_vulkan),
        Some(unload_vulkan),
    ) = (
        sym(c"SDL_WasInit"),
        sym(c"SDL_Init"),
        sym(c"SDL_Quit"),
        sym(c"SDL_GetError"),
        sym(c"SDL_Vulkan_LoadLibrary"),
        sym(c"SDL_Vulkan_UnloadLibrary"),
    )
    else {
        return Ok(started);
    };
    // SAFETY: SDL2's functions of these names have these signatures.
    let (was_init, init, quit, error, load_vulkan, unload_vulkan) = unsafe {
        (
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(u32) -> u32>(was_init),
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(u32) -> c_int>(init),
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(quit),
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> *const c_char>(error),
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*const c_char) -> c_int>(
                load_vulkan,
            ),
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(unload_vulkan),
        )
    };
    let display = || std::env::var("DISPLAY").unwrap_or_else(|_| "(unset)".into());
    let why = || {
        // SAFETY: SDL_GetError returns a C string owned by SDL.
        unsafe { CStr::from_ptr(error()) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: plain SDL calls from the main thread.
    if unsafe { was_init(SDL_INIT_VIDEO) } == 0 {
        // SAFETY: as above.
        if unsafe { init(SDL_INIT_VIDEO) } != 0 {
            return Err(format!(
                "SDL's video subsystem did not start ({}): DXVK-native's SDL2 window-system \
                 integration needs an X or Wayland display (DISPLAY={})",
                why(),
                display()
            ));
        }
        started.quit = Some(quit);
    }
    // SAFETY: as above; a null path loads the system's Vulkan loader.
    if unsafe { load_vulkan(ptr::null()) } != 0 {
        // `started` stops the video subsystem again as it drops.
        return Err(format!(
            "SDL has no Vulkan ({}): DXVK-native's SDL2 window-system integration needs an X \
             or Wayland display (DISPLAY={})",
            why(),
            display()
        ));
    }
    started.unload_vulkan = Some(unload_vulkan);
    Ok(started)
}

/// Loads DXVK-native's DXGI from `DXCL_DXVK_LIB` and makes its factory: `Ok(None)` when the
/// variable is not set, `Err` (why) when the library cannot be loaded or its factory not made
/// (the library stays loaded: DXVK may have started threads).
pub fn open() -> Result<Option<Dxvk>, String> {
    let Some(value) = std::env::var_os(ENV) else {
        return Ok(None);
    };
    let path = library_path(Path::new(&value));
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: the path holds a NUL byte", path.display()))?;
    default_env("DXVK_LOG_LEVEL", "error");
    default_env("DXVK_LOG_PATH", "none");
    // SAFETY: dlopen with a valid C string. RTLD_LOCAL: DXVK's exports (CreateDXGIFactory1, …)
    // stay out of the global namespace, so nothing else binds to them. Never closed: DXVK's
    // objects and threads live as long as the process may use them.
    let lib = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(dl_error());
    }
    // SAFETY: a live handle and a valid C string.
    let create = unsafe { libc::dlsym(lib, c"CreateDXGIFactory1".as_ptr()) };
    if create.is_null() {
        return Err(format!(
            "{} has no CreateDXGIFactory1 (not DXVK's DXGI library?)",
            path.display()
        ));
    }
    // SAFETY: CreateDXGIFactory1 has this signature (dxgi.h).
    let create: unsafe extern "system" fn(REFIID, *mut *mut c_void) -> HRESULT =
        unsafe { std::mem::transmute(create) };
    let sdl = start_sdl_video()?;
    let mut factory: *mut c_void = ptr::null_mut();
    // SAFETY: the out pointer is valid; the IID matches the pointer we keep.
    let hr = unsafe { create(&IID_IDXGIFactory1, &mut factory) };
    let made = check("CreateDXGIFactory1", hr).and_then(|()| {
        // SAFETY: success gave us one reference to an IDXGIFactory1.
        unsafe { Com::from_raw(factory.cast::<IDXGIFactory1>()) }.ok_or(HrError {
            call: "CreateDXGIFactory1",
            hr: E_POINTER,
        })
    });
    match made {
        Ok(factory) => Ok(Some(Dxvk {
            path,
            factory,
            _sdl: sdl,
        })),
        // `sdl` stops SDL's video again as it drops.
        Err(e) => Err(format!("{e} (DXVK's own log: DXVK_LOG_LEVEL=info)")),
    }
}

/// `D3D11CreateDevice`'s signature (d3d11.h).
type CreateDevice = unsafe extern "system" fn(
    *mut IDXGIAdapter,
    D3D_DRIVER_TYPE,
    HMODULE,
    UINT,
    *const D3D_FEATURE_LEVEL,
    UINT,
    UINT,
    *mut *mut ID3D11Device,
    *mut D3D_FEATURE_LEVEL,
    *mut *mut ID3D11DeviceContext,
) -> HRESULT;

/// `dxclCreateSharedTexture2D`'s signature (include/dxcl/dxcl_dxvk.h).
pub type CreateSharedTexture2D = unsafe extern "system" fn(
    *mut ID3D11Device,
    *const D3D11_TEXTURE2D_DESC,
    *mut *mut ID3D11Texture2D,
) -> HRESULT;

/// `dxclCreateSharedTexture2D` from the layer `OPENCL_LAYERS` names (loaded here if the OpenCL
/// loader has not loaded it yet: the same file, so the same library).
pub fn shared_texture_fn() -> Result<CreateSharedTexture2D, String> {
    let layers = std::env::var("OPENCL_LAYERS").map_err(|_| {
        "OPENCL_LAYERS is not set: dxclCreateSharedTexture2D is in libdxcl_layer.so".to_string()
    })?;
    for path in layers.split(':').filter(|p| !p.is_empty()) {
        let Ok(c) = CString::new(path) else { continue };
        // SAFETY: dlopen with a valid C string; never closed (the OpenCL loader uses it too).
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            continue;
        }
        // SAFETY: a live handle and a valid C string.
        let f = unsafe { libc::dlsym(lib, c"dxclCreateSharedTexture2D".as_ptr()) };
        if !f.is_null() {
            // SAFETY: the layer exports it with this signature.
            return Ok(unsafe { std::mem::transmute::<*mut c_void, CreateSharedTexture2D>(f) });
        }
    }
    Err(format!(
        "no layer in OPENCL_LAYERS ({layers}) exports dxclCreateSharedTexture2D"
    ))
}

impl Dxvk {
    /// A Direct3D 11 device and its immediate context from DXVK's `libdxvk_d3d11.so` beside the
    /// DXGI library, on DXVK's first adapter. Drop them before `self`.
    pub fn create_d3d11_device(
        &self,
    ) -> Result<(Com<ID3D11Device>, Com<ID3D11DeviceContext>), String> {
        let path = self.path.with_file_name("libdxvk_d3d11.so");
        let cpath = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{}: the path holds a NUL byte", path.display()))?;
        // SAFETY: dlopen with a valid C string; RTLD_LOCAL as for the DXGI library; never closed.
        let lib = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            return Err(dl_error());
        }
        // SAFETY: a live handle and a valid C string.
        let f = unsafe { libc::dlsym(lib, c"D3D11CreateDevice".as_ptr()) };
        if f.is_null() {
            return Err(format!("{} has no D3D11CreateDevice", path.display()));
        }
        // SAFETY: D3D11CreateDevice has this signature (d3d11.h).
        let create: CreateDevice = unsafe { std::mem::transmute(f) };
        let (mut device, mut context) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: null adapter and levels (the defaults), valid out pointers.
        let hr = unsafe {
            create(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_HARDWARE,
                ptr::null_mut(),
                0,
                ptr::null(),
                0,
                D3D11_SDK_VERSION,
                &mut device,
                ptr::null_mut(),
                &mut context,
            )
        };
        check("D3D11CreateDevice (DXVK)", hr).map_err(|e| e.to_string())?;
        // SAFETY: success gave us one reference to each.
        let made = unsafe { (Com::from_raw(device), Com::from_raw(context)) };
        match made {
            (Some(d), Some(c)) => Ok((d, c)),
            _ => Err("D3D11CreateDevice (DXVK) returned no device".into()),
        }
    }

    /// Every adapter DXVK's factory lists, in order.
    pub fn adapters(&self) -> Result<Vec<Com<IDXGIAdapter1>>, HrError> {
        let mut out = Vec::new();
        for index in 0.. {
            let mut adapter: *mut IDXGIAdapter1 = ptr::null_mut();
            let f = self.factory.as_raw();
            // SAFETY: `f` is live; the out pointer is valid.
            let hr = unsafe { ((*(*f).lpVtbl).EnumAdapters1)(f, index, &mut adapter) };
            if hr == DXGI_ERROR_NOT_FOUND {
                break;
            }
            check("IDXGIFactory1::EnumAdapters1", hr)?;
            // SAFETY: success gave us one reference.
            match unsafe { Com::from_raw(adapter) } {
                Some(a) => out.push(a),
                None => break,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_names_its_dxgi_library() {
        let dir = std::env::temp_dir();
        assert_eq!(library_path(&dir), dir.join("libdxvk_dxgi.so"));
        let file = Path::new("/opt/dxvk/lib/libdxvk_dxgi.so");
        assert_eq!(library_path(file), file);
    }
}
