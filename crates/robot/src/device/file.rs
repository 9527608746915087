//! Preference tables in a robot description file: loaded from it, saved into it with the
//! rest of the file (devices, comments, layout) left as it is.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table};

use super::{DescriptionError, RobotDescription};
use crate::preferences::{PreferenceValue, Preferences, Target};

/// Why preferences could not be saved into a description file.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot parse {}: {source}", path.display())]
    Parse { path: PathBuf, source: toml_edit::TomlError },
    /// `what` (`preferences`, `preferences.chest`...) is not a table in the file.
    #[error("cannot save preferences into {}: {what} is not a table", path.display())]
    NotATable { path: PathBuf, what: String },
    #[error("cannot save preferences into {}: {source}", path.display())]
    Invalid { path: PathBuf, source: Box<DescriptionError> },
    #[error("cannot write beside {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot replace {}: {source}", path.display())]
    Replace { path: PathBuf, source: std::io::Error },
}

/// The preferences of the description at `path`, or of the built-in NAO V6 without one.
pub fn load_preferences(path: Option<&Path>) -> Result<Preferences, DescriptionError> {
    let description = match path {
        Some(path) => RobotDescription::load(path)?,
        None => RobotDescription::nao_v6(),
    };
    Ok(description.preferences)
}

/// Replace the `targets`' tables in the description file at `path` with `preferences`'.
/// The file is replaced at once (written beside it, then renamed). Returns the number of
/// keys written.
pub fn save_preferences(
    path: &Path,
    preferences: &Preferences,
    targets: &[Target],
) -> Result<usize, SaveError> {
    let path_buf = || path.to_path_buf();
    let not_a_table = |what: &str| SaveError::NotATable { path: path_buf(), what: what.to_owned() };
    let text =
        std::fs::read_to_string(path).map_err(|source| SaveError::Read { path: path_buf(), source })?;
    let mut document: DocumentMut =
        text.parse().map_err(|source| SaveError::Parse { path: path_buf(), source })?;
    let tables = document
        .as_table_mut()
        .entry("preferences")
        .or_insert_with(|| {
            let mut tables = Table::new();
            tables.set_implicit(true);
            Item::Table(tables)
        })
        .as_table_mut()
        .ok_or_else(|| not_a_table("its `preferences`"))?;
    let mut written = 0;
    for &target in targets {
        let table = tables
            .entry(target.table())
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| not_a_table(&format!("preferences.{}", target.table())))?;
        table.clear();
        for (key, value) in preferences.table(target) {
            table.insert(key, toml_edit::value(toml_value(value)));
            written += 1;
        }
    }
    let text = document.to_string();
    RobotDescription::parse(&text)
        .map_err(|source| SaveError::Invalid { path: path_buf(), source: Box::new(source) })?;
    let name = path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.saving"));
    std::fs::write(&temporary, text).map_err(|source| SaveError::Write { path: path_buf(), source })?;
    std::fs::rename(&temporary, path).map_err(|source| SaveError::Replace { path: path_buf(), source })?;
    Ok(written)
}

fn toml_value(value: &PreferenceValue) -> toml_edit::Value {
    match value {
        PreferenceValue::Bool(flag) => (*flag).into(),
        PreferenceValue::Int(integer) => (*integer).into(),
        PreferenceValue::Float(number) => (*number).into(),
        PreferenceValue::Text(text) => text.as_str().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROBOT: &str = "# my robot\nname = \"bench\"\n\n[[device]] # the only one\n\
        name = \"A/Actuator/Value\"\nkind = \"interpolated\"\nunit = \"\"\nmin = 0.0\nmax = 1.0\ngain = 1.0\n\
        offset = 0.0\ninitial = 0.0\n";

    #[test]
    fn saved_tables_load_back_and_the_rest_of_the_file_stays() {
        let dir = std::env::temp_dir().join(format!("naobroker-preferences-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("robot.toml");
        std::fs::write(&path, ROBOT).unwrap();
        let mut preferences = load_preferences(Some(&path)).unwrap();
        assert_eq!(preferences, Preferences::default());
        preferences
            .insert(Target::Chest, "RobotConfig/Body/Type", PreferenceValue::Text("NAO".into()))
            .unwrap();
        preferences
            .insert(Target::Local, "Device/SubDeviceList/A/Actuator/Offset", PreferenceValue::Float(0.05))
            .unwrap();
        preferences.insert(Target::Head, "RobotConfig/Head/Flag", PreferenceValue::Bool(true)).unwrap();
        assert_eq!(save_preferences(&path, &preferences, &[Target::Chest, Target::Local]).unwrap(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(ROBOT), "devices and comments kept:\n{text}");
        let loaded = load_preferences(Some(&path)).unwrap();
        assert_eq!(loaded.table(Target::Chest), preferences.table(Target::Chest));
        assert_eq!(loaded.table(Target::Local), preferences.table(Target::Local));
        assert!(loaded.table(Target::Head).is_empty(), "Head was not saved");
        // Saving again replaces a table, it does not add to it.
        let mut fewer = loaded.clone();
        fewer.replace(Target::Chest, &Preferences::default());
        assert_eq!(save_preferences(&path, &fewer, &Target::ALL).unwrap(), 1);
        assert!(load_preferences(Some(&path)).unwrap().table(Target::Chest).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saving_needs_a_readable_description() {
        let missing = std::env::temp_dir().join("naobroker-no-such-robot.toml");
        let error = save_preferences(&missing, &Preferences::default(), &Target::ALL).unwrap_err();
        assert!(matches!(error, SaveError::Read { .. }), "{error}");
        assert!(error.to_string().starts_with("cannot read "), "{error}");
    }
}
