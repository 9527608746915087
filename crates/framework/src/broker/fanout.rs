//! Subscriptions and event delivery: the broker side of the one event path (`events.rs`).

use super::*;

impl Broker {
    /// Whether anyone (client, callback or in-process stream) listens to `name`.
    pub fn has_subscribers(&self, name: &str) -> bool {
        self.inner.state.borrow().events.has_subscribers(name)
    }

    /// An in-process stream of the events named `name`, held to the event window.
    pub fn subscribe_local(&self, name: &str) -> EventStream {
        let (sender, receiver) = mpsc::channel(self.inner.config.limits.event_window as usize);
        self.inner.state.borrow_mut().events.add_stream(name, sender);
        EventStream::new(receiver)
    }

    /// NAOqi's `subscribeToEvent`: call `module.method(event, value, message)` on each raise.
    /// True when new, false when it replaced the module's previous callback for `event`.
    pub fn subscribe_callback(
        &self,
        caller: &Caller,
        event: &str,
        module: &str,
        method: &str,
        message: Value,
    ) -> Result<bool, CallError> {
        let limits = &self.inner.config.limits;
        limits.check_name("event", event)?;
        self.may_act_for(caller, module)?;
        let mut state = self.inner.state.borrow_mut();
        let State { modules, clients, events, .. } = &mut *state;
        let entry = modules.get(module).expect("checked by may_act_for");
        if !entry.methods.iter().any(|m| m.name == method) {
            return Err(CallError::new(format!("module {module} has no method named {}", excerpt(method))));
        }
        let owner = match &entry.location {
            Location::Remote(peer) => clients.get(peer),
            Location::Local(_) => None,
        };
        if owner.is_some_and(|owner| owner.subscriptions(events) >= limits.max_subscriptions) {
            return Err(CallError::new(format!(
                "{module}'s client already holds max_subscriptions ({})",
                limits.max_subscriptions
            )));
        }
        Ok(events.add_callback(event, module, method, message))
    }

    /// NAOqi's `unsubscribeToEvent(event, module)`.
    pub fn unsubscribe_callback(&self, caller: &Caller, event: &str, module: &str) -> Result<(), CallError> {
        self.may_act_for(caller, module)?;
        if !self.inner.state.borrow_mut().events.remove_callback(event, module) {
            return Err(CallError::new(format!("{module} is not subscribed to {}", excerpt(event))));
        }
        Ok(())
    }

    /// Modules with a callback on `event`.
    pub fn callback_subscribers(&self, event: &str) -> Vec<String> {
        self.inner.state.borrow().events.callback_modules(event)
    }

    /// Deliver an event to every subscriber, each held to the event window.
    pub fn publish(&self, name: &str, value: &Value) {
        let window = self.inner.config.limits.event_window;
        let mut sends: Vec<(Bytes, Bytes)> = Vec::new();
        let mut local_callbacks = Vec::new();
        let (mut sent, mut dropped) = (0u64, 0u64);
        {
            let mut state = self.inner.state.borrow_mut();
            let State { events, clients, modules, .. } = &mut *state;
            let Some(subscribers) = events.subscribers_mut(name) else { return };
            let mut plain_event: Option<Bytes> = None;
            let mut closed_streams = false;
            for subscriber in subscribers.iter_mut() {
                let lost = subscriber.lost;
                let delivered = match &subscriber.target {
                    Target::Client(peer) => match clients.get_mut(peer) {
                        Some(client) if client.unacked < window => {
                            client.unacked += 1;
                            let payload = if lost == 0 {
                                plain_event.get_or_insert_with(|| event_bytes(name, value, 0)).clone()
                            } else {
                                event_bytes(name, value, lost)
                            };
                            sends.push((peer.clone(), payload));
                            Some(true)
                        }
                        Some(client) => {
                            client.events_dropped += 1;
                            Some(false)
                        }
                        None => None,
                    },
                    Target::Callback { module, method, message, in_flight } => {
                        match modules.get(module).map(|entry| &entry.location) {
                            Some(Location::Remote(peer)) => match clients.get_mut(peer) {
                                Some(client) if client.unacked < window => {
                                    client.unacked += 1;
                                    let callback = Envelope::Callback {
                                        module: module.clone(),
                                        method: method.clone(),
                                        event: name.to_owned(),
                                        value: value.clone(),
                                        message: message.clone(),
                                        lost,
                                    };
                                    sends.push((peer.clone(), Bytes::from(callback.encode())));
                                    Some(true)
                                }
                                Some(client) => {
                                    client.events_dropped += 1;
                                    Some(false)
                                }
                                None => None,
                            },
                            Some(Location::Local(recipient)) if in_flight.get() < window => {
                                in_flight.set(in_flight.get() + 1);
                                let args = vec![name.into(), value.clone(), message.clone()];
                                let invoke = Invoke {
                                    method: method.clone(),
                                    args,
                                    post: false,
                                    caller: Caller::Broker,
                                    lost,
                                };
                                local_callbacks.push((recipient.clone(), invoke, Rc::clone(in_flight)));
                                Some(true)
                            }
                            Some(Location::Local(_)) => Some(false),
                            None => None,
                        }
                    }
                    Target::Stream(stream) => {
                        match stream.try_send(Event { name: name.to_owned(), value: value.clone(), lost }) {
                            Ok(()) => Some(true),
                            Err(mpsc::error::TrySendError::Full(_)) => Some(false),
                            Err(mpsc::error::TrySendError::Closed(_)) => {
                                closed_streams = true;
                                None
                            }
                        }
                    }
                };
                match delivered {
                    Some(true) => {
                        subscriber.lost = 0;
                        sent += 1;
                    }
                    Some(false) => {
                        subscriber.lost += 1;
                        dropped += 1;
                    }
                    None => {}
                }
            }
            if closed_streams {
                events.prune(name);
            }
        }
        let counters = &self.inner.counters;
        counters.events_sent.set(counters.events_sent.get() + sent);
        counters.events_dropped.set(counters.events_dropped.get() + dropped);
        for (peer, payload) in sends {
            self.send_bytes(&peer, payload);
        }
        for (recipient, invoke, in_flight) in local_callbacks {
            let (module_method, failed) = (invoke.method.clone(), Rc::clone(&self.inner));
            actix_rt::spawn(async move {
                let result = recipient.send(invoke).await;
                in_flight.set(in_flight.get() - 1);
                if !matches!(result, Ok(Ok(_))) {
                    bump(&failed.counters.call_errors);
                    tracing::debug!(method = %module_method, "event callback failed");
                }
            });
        }
    }

    pub(super) fn subscribe_client(&self, peer: &Bytes, event: &str) -> Result<(), CallError> {
        let limits = &self.inner.config.limits;
        limits.check_name("event", event)?;
        let mut state = self.inner.state.borrow_mut();
        let State { clients, events, .. } = &mut *state;
        let Some(client) = clients.get_mut(peer) else { return Ok(()) };
        if !client.events.contains(event) && client.subscriptions(events) >= limits.max_subscriptions {
            return Err(CallError::new(format!(
                "this client already holds max_subscriptions ({})",
                limits.max_subscriptions
            )));
        }
        client.events.insert(event.to_owned());
        events.add_client(event, peer);
        Ok(())
    }
}

fn event_bytes(name: &str, value: &Value, lost: u64) -> Bytes {
    Bytes::from(Envelope::Event { name: name.to_owned(), value: value.clone(), lost }.encode())
}
