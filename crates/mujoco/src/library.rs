//! Finding and loading `libmujoco.so` at run time: the `mujoco` 3.17.0 wheel that the
//! README's test command installs into the workspace's `.venv`, or the file that
//! `NAOBROKER_MUJOCO_LIB` names. The struct layouts in `ffi.rs` are 3.17.0's, so any other
//! version is refused.

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::ffi::{mjContact, mjData, mjModel, mjVERSION_HEADER, mjtNum};
use crate::MujocoError;

/// The file the wheel ships; its SONAME is the same.
pub const LIBRARY_FILE: &str = "libmujoco.so.3.17.0";
/// Names a `libmujoco.so` to load instead of looking for the wheel.
pub const LIBRARY_VARIABLE: &str = "NAOBROKER_MUJOCO_LIB";
/// What installs the library where it is looked for.
pub const INSTALL_HINT: &str = "run the README's test command once (it installs mujoco==3.17.0 into \
     .venv), or `python3 -m venv .venv && .venv/bin/pip install mujoco==3.17.0` at the workspace's root, \
     or set NAOBROKER_MUJOCO_LIB to a libmujoco.so.3.17.0";

/// The C functions the simulator calls, resolved once.
pub(crate) struct Api {
    pub(crate) parse_xml_string:
        unsafe extern "C" fn(*const c_char, *const c_void, *mut c_char, c_int) -> *mut c_void,
    pub(crate) compile: unsafe extern "C" fn(*mut c_void, *const c_void) -> *mut mjModel,
    pub(crate) delete_spec: unsafe extern "C" fn(*mut c_void),
    pub(crate) delete_model: unsafe extern "C" fn(*mut mjModel),
    pub(crate) make_data: unsafe extern "C" fn(*const mjModel) -> *mut mjData,
    pub(crate) delete_data: unsafe extern "C" fn(*mut mjData),
    pub(crate) step: unsafe extern "C" fn(*const mjModel, *mut mjData),
    pub(crate) forward: unsafe extern "C" fn(*const mjModel, *mut mjData),
    pub(crate) name2id: unsafe extern "C" fn(*const mjModel, c_int, *const c_char) -> c_int,
    pub(crate) contact_force: unsafe extern "C" fn(*const mjModel, *const mjData, c_int, *mut mjtNum),
    #[allow(clippy::type_complexity)]
    pub(crate) ray: unsafe extern "C" fn(
        *const mjModel,
        *const mjData,
        *const mjtNum,
        *const mjtNum,
        *const u8,
        u8,
        c_int,
        *mut c_int,
        *mut mjtNum,
    ) -> mjtNum,
    /// Kept loaded as long as any model uses the functions above.
    _library: libloading::Library,
}

// The contact type is only read through `mjData::contact`; named here so that a layout
// change shows up in one place.
pub(crate) type Contact = mjContact;

/// The loaded library: once per process, shared by every simulation in it.
pub(crate) fn api() -> Result<Arc<Api>, MujocoError> {
    static API: OnceLock<Result<Arc<Api>, MujocoError>> = OnceLock::new();
    API.get_or_init(|| load(&locate()?).map(Arc::new)).clone()
}

/// Where the library is: `NAOBROKER_MUJOCO_LIB`, else the wheel in a `.venv` beside the
/// running program or the sources it was built from (the workspace's, found by walking up).
pub fn locate() -> Result<PathBuf, MujocoError> {
    if let Some(file) = std::env::var_os(LIBRARY_VARIABLE) {
        let file = PathBuf::from(file);
        return if file.is_file() { Ok(file) } else { Err(MujocoError::NoLibraryAt(file)) };
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    let running = std::env::current_exe().ok();
    let bases = running.iter().flat_map(|exe| exe.ancestors()).chain(built_from.ancestors());
    for base in bases {
        if let Some(file) = wheel_in(&base.join(".venv")) {
            return Ok(file);
        }
    }
    Err(MujocoError::NotFound)
}

/// `VENV/lib/python3.*/site-packages/mujoco/libmujoco.so.3.17.0`, if there.
fn wheel_in(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    let mut found: Vec<PathBuf> = lib
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
        .map(|entry| entry.path().join("site-packages/mujoco").join(LIBRARY_FILE))
        .filter(|file| file.is_file())
        .collect();
    found.sort();
    found.pop()
}

fn load(file: &Path) -> Result<Api, MujocoError> {
    let failed = |error: libloading::Error| MujocoError::Load(file.to_owned(), error.to_string());
    // SAFETY: loading MuJoCo runs its static initialisers only; the symbols below are
    // resolved with the signatures of MuJoCo 3.17.0's mujoco.h, checked by mj_version.
    unsafe {
        let library = libloading::Library::new(file).map_err(failed)?;
        let version: libloading::Symbol<unsafe extern "C" fn() -> c_int> =
            library.get(b"mj_version\0").map_err(failed)?;
        let found = version();
        if found != mjVERSION_HEADER as c_int {
            return Err(MujocoError::Version {
                file: file.to_owned(),
                found,
                wanted: mjVERSION_HEADER as c_int,
            });
        }
        macro_rules! symbol {
            ($name:literal) => {
                *library.get(concat!($name, "\0").as_bytes()).map_err(failed)?
            };
        }
        Ok(Api {
            parse_xml_string: symbol!("mj_parseXMLString"),
            compile: symbol!("mj_compile"),
            delete_spec: symbol!("mj_deleteSpec"),
            delete_model: symbol!("mj_deleteModel"),
            make_data: symbol!("mj_makeData"),
            delete_data: symbol!("mj_deleteData"),
            step: symbol!("mj_step"),
            forward: symbol!("mj_forward"),
            name2id: symbol!("mj_name2id"),
            contact_force: symbol!("mj_contactForce"),
            ray: symbol!("mj_ray"),
            _library: library,
        })
    }
}
