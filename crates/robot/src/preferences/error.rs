//! Why a preference, a preference table or a target name was refused.

use super::{PreferenceLimit, MAX_KEYS_PER_TARGET, PREFERENCE_PREFIXES};

/// A refused preference: every way `DCM.preferences` and a robot description can go wrong
/// besides the files themselves.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PreferenceError {
    #[error("unknown preference target {0:?} (Chest, Head, Local or All)")]
    UnknownTarget(String),
    #[error(
        "the main description (its [[device]] tables) does not change while the broker runs: use the \
         target Chest, Head, Local or All"
    )]
    MainTarget,
    /// `key` is cut to an excerpt.
    #[error(
        "preference key {key} must start with one of {} (ALMemory data the DCM owns)",
        PREFERENCE_PREFIXES.join(", ")
    )]
    KeyPrefix { key: String },
    #[error("{0} must be a number")]
    NotANumber(String),
    #[error("{0} must be a finite number")]
    OffsetNotFinite(String),
    #[error("{0} must be a finite number, not 0")]
    GainNotFiniteOrZero(String),
    #[error(transparent)]
    Limit(#[from] PreferenceLimit),
    #[error("[preferences.{table}] holds {keys} keys, the most a table may hold is {MAX_KEYS_PER_TARGET}")]
    TableTooLarge { table: &'static str, keys: usize },
    #[error("[preferences.{table}]: {source}")]
    InTable { table: &'static str, source: Box<PreferenceError> },
}
