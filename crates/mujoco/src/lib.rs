//! MuJoCo for naobroker's simulated NAO: `libmujoco.so` 3.17.0 found and loaded when a
//! simulation starts (never at build time: the workspace builds without it), and
//! [`Simulation`], one model with its data, exposing the few calls the physics needs as
//! safe methods over slices.
//!
//! Why Rust over MuJoCo's C API rather than MuJoCo's Python bindings in a process of their
//! own: the simulator steps 6 times per 12 ms LoLA cycle and reads a few hundred numbers
//! each time; a call here costs nothing beyond MuJoCo's own work, where a Python process
//! would add an interpreter and an exchange per cycle, and one Rust process is simpler to
//! run, pace and test. Why loaded at run time rather than linked (as `mujoco-rs` does):
//! linking needs the library when any crate of the workspace builds, and the README's first
//! command must build without it.

mod ffi;
mod library;
mod simulation;

pub use library::{locate, INSTALL_HINT, LIBRARY_FILE, LIBRARY_VARIABLE};
pub use simulation::{ContactPoint, Object, Simulation};

use std::path::PathBuf;

/// Why MuJoCo could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MujocoError {
    #[error("MuJoCo 3.17.0 not found: {hint}", hint = INSTALL_HINT)]
    NotFound,
    #[error("{LIBRARY_VARIABLE} names {0}, which is no file")]
    NoLibraryAt(PathBuf),
    #[error("loading MuJoCo from {0}: {1}")]
    Load(PathBuf, String),
    #[error("{file} is MuJoCo {found}, not {wanted}: naobroker's struct layouts are 3.17.0's")]
    Version { file: PathBuf, found: i32, wanted: i32 },
    #[error("MuJoCo refused the model: {0}")]
    Model(String),
    #[error("the model text holds a NUL byte")]
    NulInModel,
}
