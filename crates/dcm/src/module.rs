//! The DCM module (NAOqi's DCM API over the real-time cycle) and the handle in-process
//! modules use for real-time hooks.

mod settings;

use std::cell::RefCell;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext, Value};
use naobroker_memory::Store;
use naobroker_rtslots::FastAccess;
use tokio::sync::oneshot;

use settings::{calibration_method, preferences_method, Settings};

use crate::core::{Aliases, RequestParser};
use crate::cycle::{ClockMode, CycleContext, CycleReport, Phase, RequestChannel, Shared, Wakeups};
use crate::device::{DeviceModel, DEVICE_PREFIX, SUBDEVICE_PREFIX};

struct StepWaiter {
    cycle: u64,
    done: oneshot::Sender<()>,
}

/// The actor side of the DCM, shared by the module and by in-process modules that
/// register real-time hooks. Lives on the broker's arbiter thread.
#[derive(Clone)]
pub struct DcmHandle {
    channel: Rc<RefCell<RequestChannel>>,
    shared: Arc<Shared>,
    model: Arc<DeviceModel>,
}

/// Removes its hook from the cycle when disconnected (or dropped).
pub struct HookConnection {
    id: u32,
    channel: Rc<RefCell<RequestChannel>>,
}

impl HookConnection {
    pub fn disconnect(self) {}
}

impl Drop for HookConnection {
    fn drop(&mut self) {
        if let Err(error) = self.channel.borrow_mut().remove_hook(self.id) {
            tracing::warn!(%error, "could not remove a real-time hook");
        }
    }
}

impl DcmHandle {
    pub fn new(channel: RequestChannel) -> DcmHandle {
        let shared = Arc::clone(channel.shared());
        let model = Arc::clone(channel.model());
        DcmHandle { channel: Rc::new(RefCell::new(channel)), shared, model }
    }

    pub fn model(&self) -> &Arc<DeviceModel> {
        &self.model
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Cycle statistics, with each hook's name.
    pub fn cycle_stats(&self) -> Value {
        self.shared.stats.to_value(self.channel.borrow().hook_names())
    }

    /// An actuator's index for [`CycleContext::set`].
    pub fn actuator(&self, name: &str) -> Result<usize, String> {
        self.model.actuator(name).ok_or_else(|| format!("unknown actuator {name}"))
    }

    /// Resolve ALMemory real-time keys once, for reading in a hook every cycle.
    pub fn fast_access(&self, keys: &[&str]) -> Result<FastAccess, String> {
        self.shared.slots.fast_access(keys).map_err(|error| error.to_string())
    }

    /// NAOqi's `atPreProcess`: `callback` runs on the cycle thread after the sensors
    /// are read, before commands are computed. It must not allocate, lock or block.
    pub fn at_pre_process(
        &self,
        name: &str,
        callback: impl FnMut(&mut CycleContext<'_>) + Send + 'static,
    ) -> Result<HookConnection, String> {
        self.hook(Phase::Pre, name, Box::new(callback))
    }

    /// NAOqi's `atPostProcess`: runs after every value reached ALMemory.
    pub fn at_post_process(
        &self,
        name: &str,
        callback: impl FnMut(&mut CycleContext<'_>) + Send + 'static,
    ) -> Result<HookConnection, String> {
        self.hook(Phase::Post, name, Box::new(callback))
    }

    fn hook(
        &self,
        phase: Phase,
        name: &str,
        callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>,
    ) -> Result<HookConnection, String> {
        let id = self.channel.borrow_mut().add_hook(phase, name, callback)?;
        Ok(HookConnection { id, channel: Rc::clone(&self.channel) })
    }
}

/// The DCM module: NAOqi's DCM API over the real-time cycle.
pub struct Dcm {
    handle: DcmHandle,
    aliases: Aliases,
    waiters: Rc<RefCell<Vec<StepWaiter>>>,
    signal: Option<(rtrb::Consumer<CycleReport>, UnixDatagram)>,
    broker: Broker,
    event_decimation: u64,
    events_dropped: Rc<std::cell::Cell<u64>>,
    settings: Settings,
}

impl Dcm {
    pub fn new(
        handle: DcmHandle,
        reports: rtrb::Consumer<CycleReport>,
        wake: UnixDatagram,
        broker: Broker,
        event_decimation: u32,
    ) -> Dcm {
        let settings = Settings::new(&handle.model);
        Dcm {
            handle,
            settings,
            aliases: Aliases::default(),
            waiters: Rc::default(),
            signal: Some((reports, wake)),
            broker,
            event_decimation: u64::from(event_decimation.max(1)),
            events_dropped: Rc::default(),
        }
    }

    /// Show the preferences in ALMemory's `store`, and save them into `description` (the
    /// robot description file the broker started with, if any).
    pub fn with_preferences(mut self, store: Arc<Store>, description: Option<PathBuf>) -> Dcm {
        self.settings.attach(store, description);
        self
    }

    fn parser(&self) -> RequestParser<'_> {
        RequestParser { model: &self.handle.model, aliases: &self.aliases }
    }

    fn send(&self, request: crate::core::Request) -> Result<(), CallError> {
        Ok(self.handle.channel.borrow_mut().send(request)?)
    }

    /// Follow the cycle thread: raise the cycle events and finish `step` calls.
    fn follow_cycles(&mut self) {
        let Some((mut reports, wake)) = self.signal.take() else { return };
        let waiters = Rc::clone(&self.waiters);
        let shared = Arc::clone(&self.handle.shared);
        let broker = self.broker.clone();
        let decimation = self.event_decimation;
        let events_dropped = Rc::clone(&self.events_dropped);
        actix_rt::spawn(async move {
            let wakeups = match Wakeups::new(wake) {
                Ok(wakeups) => wakeups,
                Err(error) => {
                    tracing::error!(%error, "cannot follow the DCM cycle");
                    return;
                }
            };
            let in_flight = Rc::new(std::cell::Cell::new(0u32));
            while wakeups.next().await {
                while let Ok(report) = reports.pop() {
                    if report.cycle % decimation != 0 {
                        continue;
                    }
                    // A subscriber slower than the cycle loses events, never slows it.
                    if in_flight.get() > 64 {
                        events_dropped.set(events_dropped.get() + 2);
                        continue;
                    }
                    let value = Value::Array(vec![report.cycle.into(), report.time.into()]);
                    for event in ["DCM/PreProcess", "DCM/PostProcess"] {
                        let broker = broker.clone();
                        let value = value.clone();
                        let in_flight = Rc::clone(&in_flight);
                        in_flight.set(in_flight.get() + 1);
                        actix_rt::spawn(async move {
                            let args = vec![event.into(), value];
                            let _ = broker.call("ALMemory", "raiseEvent", args, false).await;
                            in_flight.set(in_flight.get() - 1);
                        });
                    }
                }
                let done = shared.cycles();
                let ready: Vec<StepWaiter> = {
                    let mut waiters = waiters.borrow_mut();
                    let (ready, pending) = waiters.drain(..).partition(|w| w.cycle <= done);
                    *waiters = pending;
                    ready
                };
                for waiter in ready {
                    let _ = waiter.done.send(());
                }
            }
        });
    }
}

impl Module for Dcm {
    fn name(&self) -> String {
        "DCM".into()
    }

    fn description(&self) -> String {
        "Device Communication Manager: timed commands to every actuator, interpolated each cycle.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("set", "set([name, update, [[value, time(, importance)], ...]]): timed commands for an actuator or alias.",
            |this, _, (request,): (Value,)| {
                let request = this.parser().set(&request)?;
                this.send(request)
            })
        .add("setAlias", "setAlias([alias, update, \"time-mixed\", [[[v, t], ...] per actuator]]) or ([alias, update, \"time-separate\", 0, [times], [[values] per actuator]]).",
            |this, _, (request,): (Value,)| {
                let request = this.parser().set_alias(&request)?;
                this.send(request)
            })
        .add("createAlias", "createAlias([alias, [actuator, ...]]): answers the input with unknown names replaced by \"\".",
            |this, _, (alias,): (Value,)| Ok(this.aliases.create(&this.handle.model, &alias)?))
        .add("getTime", "DCM time in ms plus an offset (int32, rolls over).",
            |this, _, (offset,): (Option<i64>,)| Ok(this.handle.shared.now().wrapping_add(offset.unwrap_or(0) as i32)))
        .add("getPrefix", "[\"Device/SubDeviceList/\", \"Device/DeviceList/\"].",
            |_, _, (_ignored,): (Option<Value>,)| Ok(vec![SUBDEVICE_PREFIX, DEVICE_PREFIX]))
        .add("special", "special(\"Version\" | \"Reset\" | \"Config\" | \"Chain\" | \"Diagnostic\").",
            |this, _, (what,): (String,)| match what.as_str() {
                "Version" => Ok(Value::from(env!("CARGO_PKG_VERSION"))),
                "Reset" => {
                    this.handle.channel.borrow_mut().reset()?;
                    Ok(Value::from(true))
                }
                "Config" => Ok(Value::Map(vec![
                    ("robot".into(), this.handle.model.robot.as_str().into()),
                    ("period_us".into(), this.handle.shared.period_us.into()),
                    ("clock".into(), format!("{:?}", this.handle.shared.clock).to_lowercase().into()),
                    ("buffer_capacity".into(), (this.handle.shared.capacity as u64).into()),
                    ("actuators".into(), (this.handle.model.actuators.len() as u64).into()),
                    ("sensors".into(), (this.handle.model.sensors.len() as u64).into()),
                ])),
                "Chain" => {
                    let mut chains: Vec<(String, Vec<String>)> = Vec::new();
                    for joint in &this.handle.model.joints {
                        match chains.iter_mut().find(|(c, _)| *c == joint.chain) {
                            Some((_, joints)) => joints.push(joint.name.clone()),
                            None => chains.push((joint.chain.clone(), vec![joint.name.clone()])),
                        }
                    }
                    Ok(naobroker_framework::to_value(&chains))
                }
                "Diagnostic" => Ok(this.handle.cycle_stats()),
                other => Err(CallError::new(format!("unknown special {other:?} (Version, Reset, Config, Chain, Diagnostic)"))),
            })
        .add_async("step", "Manual clock only: run n cycles, answer the new DCM time.",
            |this, _, (n,): (u64,)| {
                let shared = Arc::clone(&this.handle.shared);
                let waiter = (shared.clock == ClockMode::Manual && n > 0).then(|| {
                    let (done, finished) = oneshot::channel();
                    let cycle = shared.grant(n);
                    this.waiters.borrow_mut().push(StepWaiter { cycle, done });
                    finished
                });
                let manual = shared.clock == ClockMode::Manual;
                async move {
                    if !manual {
                        return Err(CallError::new("step needs the manual clock (naobroker --clock manual)"));
                    }
                    if let Some(finished) = waiter {
                        finished.await.map_err(|_| CallError::new("the DCM cycle stopped"))?;
                    }
                    Ok(shared.now())
                }
            })
        .add("stats", "Cycle statistics: cycles, overruns, lateness histogram, compute time, hooks.",
            |this, _, ()| {
                let mut stats = match this.handle.cycle_stats() {
                    Value::Map(entries) => entries,
                    _ => Vec::new(),
                };
                stats.push(("events_dropped".into(), this.events_dropped.get().into()));
                stats.push(("realtime".into(), (this.handle.shared.slots.get(this.handle.shared.dcm_slots.realtime) != 0.0).into()));
                stats.push(("period_us".into(), this.handle.shared.period_us.into()));
                Ok(Value::Map(stats))
            })
        .add("simulateSensor", "Simulation only: force a sensor to a value (nil releases it).",
            |this, _, (name, value): (String, Option<f64>)| {
                let sensor = this.handle.model.sensor(&name).ok_or_else(|| CallError::new(format!("unknown sensor {name:?}")))?;
                if this.handle.shared.slots.get(this.handle.shared.dcm_slots.simulation) == 0.0 {
                    return Err(CallError::new("simulateSensor needs the sim backend"));
                }
                Ok(this.handle.channel.borrow_mut().force_sensor(sensor, value)?)
            })
        .add("preferences", "preferences(action, target, key, value): \"Add\" a key to the target \"Chest\", \"Head\" or \"Local\"; \"Save\" or \"Load\" a target (or \"All\") to or from the robot description. Answers the keys added, saved or loaded.",
            preferences_method)
        .add("calibration", "calibration([joint position actuator, \"Manual\", \"InPosition\", reference]): the joint, held at reference, is calibrated there.",
            calibration_method)
        .add("getBufferSize", "Timed commands buffered for an actuator (as of the last cycle).",
            |this, _, (name,): (String,)| {
                let actuator = this.handle.actuator(&name)?;
                Ok(this.handle.shared.buffer_len(actuator) as u64)
            });
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.settings.publish_all(self);
        self.follow_cycles();
    }
}
