//! `set`, `setAlias` and `createAlias` read from NAOqi's values: what they build, and the
//! errors that name what is wrong.

use naobroker_robot::device::RobotDescription;

use super::*;

const RED: &str = "ChestBoard/Led/Red/Actuator/Value";
const YAW: &str = "HeadYaw/Position/Actuator/Value";

fn model() -> DeviceModel {
    DeviceModel::new(RobotDescription::nao_v6()).unwrap()
}

fn arr(items: Vec<Value>) -> Value {
    Value::Array(items)
}

fn cmd(value: f64, time: i64) -> Value {
    arr(vec![Value::F64(value), time.into()])
}

/// The model with the alias `Chest` = [red LED, an unknown name].
fn with_chest_alias() -> (DeviceModel, Aliases) {
    let model = model();
    let mut aliases = Aliases::default();
    let created =
        create_alias(&mut aliases, &model, &arr(vec!["Chest".into(), arr(vec![RED.into(), "Nope".into()])]));
    assert_eq!(created.unwrap(), arr(vec!["Chest".into(), arr(vec![RED.into(), "".into()])]));
    (model, aliases)
}

#[test]
fn set_reads_commands_clamped_sorted_and_nan_free() {
    let (model, aliases) = (model(), Aliases::default());
    let parser = RequestParser { model: &model, aliases: &aliases };
    let request = parser
        .set(&arr(vec![RED.into(), "Merge".into(), arr(vec![cmd(3.0, 20), cmd(0.2, 10), cmd(0.7, 10)])]))
        .unwrap();
    let expected = [TimedCommand { time: 10, value: 0.7 }, TimedCommand { time: 20, value: 1.0 }];
    assert_eq!(request.groups()[0].commands, expected);
    let all_nan = arr(vec![YAW.into(), "ClearAll".into(), arr(vec![cmd(f64::NAN, 10)])]);
    assert!(parser.set(&all_nan).unwrap().groups().is_empty());
    let with_importance = arr(vec![Value::F64(0.5), 10.into(), 1.into()]);
    let request = parser.set(&arr(vec![YAW.into(), "Merge".into(), arr(vec![with_importance])])).unwrap();
    assert_eq!(request.groups()[0].commands, [TimedCommand { time: 10, value: 0.5 }]);
}

#[test]
fn set_alias_reads_both_formats() {
    let (model, aliases) = with_chest_alias();
    let parser = RequestParser { model: &model, aliases: &aliases };
    let mixed = parser.set_alias(&arr(vec![
        "Chest".into(),
        "ClearAll".into(),
        "time-mixed".into(),
        arr(vec![arr(vec![cmd(0.25, 10), cmd(0.5, 20)]), arr(vec![cmd(1.0, 10)])]),
    ]));
    let separate = parser.set_alias(&arr(vec![
        "Chest".into(),
        "ClearAll".into(),
        "time-separate".into(),
        0.into(),
        arr(vec![10.into(), 20.into()]),
        arr(vec![arr(vec![Value::F64(0.25), Value::F64(0.5)]), arr(vec![1.into(), 1.into()])]),
    ]));
    let (mixed, separate) = (mixed.unwrap(), separate.unwrap());
    assert_eq!(mixed, separate);
    assert_eq!(mixed.groups().len(), 1, "the unknown member is skipped");
    assert_eq!(mixed.groups()[0].commands.len(), 2);
}

#[test]
fn bad_requests_name_the_problem() {
    let (model, aliases) = with_chest_alias();
    let parser = RequestParser { model: &model, aliases: &aliases };
    let set = |name: &str, update: &str, commands: Value| {
        parser.set(&arr(vec![name.into(), update.into(), commands])).unwrap_err().to_string()
    };
    assert_eq!(set("Nope", "Merge", arr(vec![cmd(1.0, 10)])), "unknown actuator or alias \"Nope\"");
    assert!(set("HeadYaw/Position/Sensor/Value", "Merge", arr(vec![cmd(1.0, 10)])).contains("is a sensor"));
    assert!(set(YAW, "Replace", arr(vec![])).contains("unknown update type"));
    let not_a_number = set(YAW, "Merge", arr(vec![arr(vec!["x".into(), 10.into()])]));
    assert_eq!(not_a_number, "the command list, command 1: the value must be a number, got \"x\"");
    assert_eq!(set(YAW, "Merge", cmd(1.5, 10)), "the command list, command 1 must be an array, got 1.5");
    let short = set(YAW, "Merge", arr(vec![cmd(1.0, 10), arr(vec![1.into()])]));
    assert_eq!(short, "the command list, command 2 must be [value, time] or [value, time, importance]");
    let two = parser.set(&arr(vec![YAW.into(), "Merge".into()])).unwrap_err();
    assert_eq!(two, RequestError::SetShape(2));
    let separate = |times: Vec<Value>, lists: Vec<Value>| {
        let request =
            vec!["Chest".into(), "Merge".into(), "time-separate".into(), 0.into(), arr(times), arr(lists)];
        parser.set_alias(&arr(request)).unwrap_err().to_string()
    };
    assert!(separate(vec![10.into()], vec![arr(vec![1.into()])]).contains("has 2 actuators"));
    let short_list = separate(vec![10.into()], vec![arr(vec![1.into()]), arr(vec![])]);
    assert_eq!(short_list, "value list 2 has 0 values but there are 1 times");
    let bad_value = separate(vec![10.into()], vec![arr(vec![1.into()]), arr(vec!["x".into()])]);
    assert_eq!(bad_value, "value list 2, value 1 must be a number, got \"x\"");
    let bad_time = separate(vec![10.into(), "t".into()], vec![]);
    assert_eq!(bad_time, "time 2 must be an integer DCM time in ms, got \"t\"");
    let set_alias = |request: Vec<Value>| parser.set_alias(&arr(request)).unwrap_err().to_string();
    let mixed = set_alias(vec![
        "Chest".into(),
        "Merge".into(),
        "time-mixed".into(),
        arr(vec![arr(vec![]), cmd(1.5, 1)]),
    ]);
    assert_eq!(mixed, "command list 2, command 1 must be an array, got 1.5");
    let sorted = set_alias(vec!["Chest".into(), "Merge".into(), "time-sorted".into(), arr(vec![])]);
    assert!(sorted.contains("unknown setAlias format"), "{sorted}");
    let unknown = set_alias(vec!["Nope".into(), "Merge".into(), "time-mixed".into(), arr(vec![])]);
    assert_eq!(unknown, "unknown alias \"Nope\"");
    let missing = set_alias(vec!["Chest".into(), "Merge".into(), "time-separate".into(), arr(vec![])]);
    assert!(missing.starts_with("a time-separate setAlias request must be"), "{missing}");
}

#[test]
fn create_alias_names_what_is_wrong() {
    let model = model();
    let mut aliases = Aliases::default();
    let mut create = |request: Value| create_alias(&mut aliases, &model, &request).unwrap_err();
    let clash = create(arr(vec![YAW.into(), arr(vec![])]));
    assert_eq!(clash, RequestError::Alias(AliasError::NamedLikeDevice(YAW.into())));
    assert!(clash.to_string().contains("named like a device"));
    let member = create(arr(vec!["Pair".into(), arr(vec![RED.into(), 3.into()])])).to_string();
    assert_eq!(member, "alias member 2 must be a string, got 3");
    assert_eq!(create(arr(vec!["Pair".into()])), RequestError::CreateAliasShape(1));
    assert!(aliases.get("Pair").is_none(), "nothing was created");
}
