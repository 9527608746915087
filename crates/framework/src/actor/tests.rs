//! A call made while its actor's state is held waits its turn instead of failing.

use std::cell::RefCell;
use std::rc::Rc;

use naobroker_protocol::Value;

use super::ModuleActor;
use crate::broker::{Broker, Limits};
use crate::error::CallError;
use crate::identity::Caller;
use crate::invoke::{Invoke, ModuleHandle, Outcome};
use crate::module::{Methods, Module, ModuleContext};
use crate::session::Session;

/// `outer` calls `inner` of its own module from its synchronous part, while `outer` holds
/// the module's state.
struct Reentrant {
    me: Rc<RefCell<Option<ModuleHandle>>>,
    /// What ran, in order.
    log: Rc<RefCell<Vec<&'static str>>>,
}

impl Module for Reentrant {
    fn name(&self) -> String {
        "Reentrant".into()
    }

    fn methods(methods: &mut Methods<Self>) {
        methods
            .add_async("outer", "Calls inner on its own actor.", |this: &mut Reentrant, _, (): ()| {
                let me = this.me.borrow().clone().expect("the test sets the handle");
                let inner = me.resolve("inner").expect("inner is a method");
                let call =
                    Invoke { method: inner, args: Vec::new(), post: false, caller: Caller::Broker, lost: 0 };
                let outcome = Rc::clone(&me).invoke(call);
                let waited = matches!(outcome, Outcome::Later(_));
                this.log.borrow_mut().push("outer");
                async move {
                    let inner = outcome.into_future().await?;
                    Ok::<_, CallError>(Value::Array(vec![waited.into(), inner]))
                }
            })
            .add("inner", "Runs on the state.", |this: &mut Reentrant, _, (): ()| {
                this.log.borrow_mut().push("inner");
                Ok(true)
            });
    }
}

#[test]
fn a_call_made_while_the_state_is_held_runs_after_the_call_that_holds_it() {
    actix_rt::System::new().block_on(async {
        let broker = Broker::new(Limits::default(), std::time::Duration::from_secs(10));
        let (me, log) = (Rc::default(), Rc::default());
        let module = Reentrant { me: Rc::clone(&me), log: Rc::clone(&log) };
        let context = ModuleContext::new(Session::Broker(broker), "Reentrant");
        let actor: ModuleHandle = ModuleActor::start(module, context, None);
        *me.borrow_mut() = Some(Rc::clone(&actor));
        let outer = actor.resolve("outer").expect("outer is a method");
        let call = Invoke { method: outer, args: Vec::new(), post: false, caller: Caller::Broker, lost: 0 };
        let answer = actor.invoke(call).into_future().await;
        assert_eq!(answer, Ok(Value::Array(vec![true.into(), true.into()])), "inner waited and ran");
        assert_eq!(*log.borrow(), ["outer", "inner"]);
        me.borrow_mut().take();
    });
}
