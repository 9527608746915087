//! Serving modules from a session: calls and callbacks to them, and what a reconnect registers again.

use std::rc::Rc;

use naobroker_protocol::{CallbackSubscription, Envelope, MethodInfo, Value};

use super::{ClientSession, ServedModule};
use crate::error::{CallError, CallResult};
use crate::identity::Caller;
use crate::invoke::{unknown_method, Invoke, ModuleHandle, Outcome};

impl ClientSession {
    /// Register again what this session had registered, after a reconnect or when the
    /// broker says it no longer knows us.
    pub(super) fn restore(&self) {
        let modules: Vec<(String, Vec<MethodInfo>)> = self
            .inner
            .served
            .borrow()
            .iter()
            .map(|(name, served)| (name.clone(), served.actor.method_infos().to_vec()))
            .collect();
        for (module, methods) in modules {
            let request = self.request(|id| Envelope::Register { id, module: module.clone(), methods }, None);
            actix_rt::spawn(async move {
                if let Err(error) = request.await {
                    tracing::error!(%module, %error, "could not register again");
                }
            });
        }
        let events: Vec<String> = self.inner.subscriptions.borrow().keys().cloned().collect();
        for event in events {
            let request = self.request(|id| Envelope::Subscribe { id, event }, None);
            actix_rt::spawn(async move {
                let _ = request.await;
            });
        }
        // After the modules: a callback names one of them.
        let callbacks: Vec<CallbackSubscription> = self.inner.callbacks.borrow().values().cloned().collect();
        for subscription in callbacks {
            let (event, module) = (subscription.event.clone(), subscription.module.clone());
            let request = self.request(|id| Envelope::SubscribeCallback { id, subscription }, None);
            actix_rt::spawn(async move {
                if let Err(error) = request.await {
                    tracing::error!(%event, %module, %error, "could not subscribe a callback again");
                }
            });
        }
    }

    /// NAOqi's `ALMemory.subscribeToEvent` (or `subscribeToMicroEvent`, with a message): the
    /// broker calls `module.method(event, value, message)`, for a module this session serves,
    /// on each raise of `event`. Subscribed again after a reconnect, until
    /// [`unsubscribe_callback`](Self::unsubscribe_callback) or the module's unregistration.
    pub async fn subscribe_callback(&self, subscription: CallbackSubscription) -> Result<(), CallError> {
        let key = (subscription.event.clone(), subscription.module.clone());
        let sent = subscription.clone();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::SubscribeCallback { id, subscription: sent }, timeout).await?;
        self.inner.callbacks.borrow_mut().insert(key, subscription);
        Ok(())
    }

    /// NAOqi's `ALMemory.unsubscribeToEvent(event, module)`.
    pub async fn unsubscribe_callback(&self, event: &str, module: &str) -> Result<(), CallError> {
        let key = (event.to_owned(), module.to_owned());
        let (event, module) = key.clone();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::UnsubscribeCallback { id, event, module }, timeout).await?;
        self.inner.callbacks.borrow_mut().remove(&key);
        Ok(())
    }

    /// Stop serving module `name`: the broker frees its name at once, its NAOqi callbacks go
    /// with it, and calls under way to it fail.
    pub async fn unregister(&self, name: &str) -> Result<(), CallError> {
        self.inner.served.borrow_mut().remove(name);
        self.inner.callbacks.borrow_mut().retain(|(_, module), _| module != name);
        let module = name.to_owned();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::Unregister { id, module }, timeout).await.map(drop)
    }

    pub(super) fn run_callback(&self, module: String, method: String, args: Vec<Value>, lost: u64) {
        let outcome = self.invoke_served(&module, &method, args, false, lost);
        let session = self.clone();
        actix_rt::spawn(async move {
            if let Err(error) = outcome.into_future().await {
                tracing::warn!(%module, %method, %error, "event callback failed");
            }
            session.consumed();
        });
    }

    /// Run a call to a module this session serves, resolving its method's name here.
    fn invoke_served(&self, module: &str, method: &str, args: Vec<Value>, post: bool, lost: u64) -> Outcome {
        let actor = self.inner.served.borrow().get(module).map(|served| Rc::clone(&served.actor));
        let Some(actor) = actor else {
            return Outcome::Now(Err(CallError::not_found(format!(
                "no module named {module} in this process"
            ))));
        };
        match actor.resolve(method) {
            Some(method) => actor.invoke(Invoke { method, args, post, caller: Caller::Broker, lost }),
            None => Outcome::Now(Err(unknown_method(module, method))),
        }
    }

    pub(super) fn serve(&self, id: u64, module: String, method: String, args: Vec<Value>, post: bool) {
        let outcome = self.invoke_served(&module, &method, args, post, 0);
        let exit = !post && method == "exit";
        let result = match outcome {
            // Answered at once, on the reading task: no task of its own.
            Outcome::Now(result) if !exit => return self.answer(id, result),
            other => other,
        };
        let session = self.clone();
        let connection = self.inner.connection.get();
        actix_rt::spawn(async move {
            let result = result.into_future().await;
            if session.inner.connection.get() != connection {
                tracing::debug!(%module, id, "reply dropped: the call came on a connection since replaced");
                return;
            }
            let exited = exit && result.is_ok();
            session.answer(id, result);
            if exited {
                // After the reply (unregistering fails the calls under way, exit's own too), so
                // that the name is free before the process goes.
                if let Err(error) = session.unregister(&module).await {
                    tracing::warn!(%module, %error, "could not unregister after exit");
                }
            }
        });
    }

    fn answer(&self, id: u64, result: CallResult) {
        self.send(&match result {
            Ok(value) => Envelope::Reply { id, value },
            Err(error) => Envelope::Error { id, message: error.message, kind: error.kind },
        });
    }

    /// Serve `actor` as module `name` to everyone connected to the broker.
    pub(crate) async fn register(&self, name: &str, actor: ModuleHandle) -> Result<(), CallError> {
        let module = name.to_owned();
        let announced = actor.method_infos().to_vec();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::Register { id, module, methods: announced }, timeout).await?;
        self.inner.served.borrow_mut().insert(name.to_owned(), ServedModule { actor });
        Ok(())
    }
}
