//! NAOqi callback subscriptions: the ALMemory call each `SubscribeCallback` and
//! `UnsubscribeCallback` message stands for, so that one subscribed by its own message and
//! one subscribed by a NAOqi script's `ALMemory.subscribeToEvent` call are the same
//! subscription, with the same checks and answers.

use naobroker_protocol::{CallbackSubscription, Value};

/// ALMemory's method and arguments that subscribe `subscription`.
pub(crate) fn subscribe_call(subscription: CallbackSubscription) -> (&'static str, Vec<Value>) {
    let CallbackSubscription { event, module, method, micro_message } = subscription;
    match micro_message {
        None => ("subscribeToEvent", vec![event.into(), module.into(), method.into()]),
        Some(message) => ("subscribeToMicroEvent", vec![event.into(), module.into(), message, method.into()]),
    }
}

/// ALMemory's method and arguments that unsubscribe `module`'s callback on `event` (events and
/// micro events alike).
pub(crate) fn unsubscribe_call(event: String, module: String) -> (&'static str, Vec<Value>) {
    ("unsubscribeToEvent", vec![event.into(), module.into()])
}
