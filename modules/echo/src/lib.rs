//! The smallest useful module. `docs/modules.md` walks through it line by line.
#![deny(unsafe_code)]
use naobroker_framework::{CallError, Methods, Module, Value};

#[derive(Default)]
pub struct Echo {
    calls: u64,
}

impl Module for Echo {
    fn name(&self) -> String {
        "Echo".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("echo", "Returns its argument.", |this, _, (value,): (Value,)| {
            this.calls += 1;
            Ok(value)
        })
        .add("calls", "How many times echo was called.", |this, _, ()| Ok(this.calls))
        .add(
            "shout",
            "Raises the event Echo/Shouted with the text, in upper case.",
            |_, ctx, (text,): (String,)| {
                if text.is_empty() {
                    return Err(CallError::bad_argument("nothing to shout"));
                }
                ctx.raise_event("Echo/Shouted", text.to_uppercase().into());
                Ok(())
            },
        );
    }
}
