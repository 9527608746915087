//! The naobroker process: configuration and start-up of the built-in modules.
#![deny(unsafe_code, unreachable_pub)]

mod config;
mod dcm_config;
mod error;
mod watch;

pub use config::{BrokerSection, Config};
pub use dcm_config::{Backend, DcmConfig, DcmConfigError};
pub use error::{ConfigError, StartError};

use std::sync::Arc;

use naobroker_backend_lola::LolaRobot;
use naobroker_backend_serial::SerialBoard;
use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{CycleThread, DcmSlots, StartedCycle};
use naobroker_dcm_module::{Dcm, DcmHandle};
use naobroker_framework::Broker;
use naobroker_hardware::Hardware;
use naobroker_memory::{ALMemory, Store};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

/// The producers of requests to the DCM's cycle: each gets a channel of its own.
const DCM_MODULE: &str = "DCM";
const MOTION: &str = "ALMotion";
const PRODUCERS: &[&str] = &[DCM_MODULE, MOTION];

/// Everything the broker runs, kept alive for the life of the process.
pub struct Running {
    pub broker: Broker,
    pub dcm: DcmHandle,
    pub store: Arc<Store>,
    /// The Foxglove live view, when configured.
    pub foxglove: Option<naobroker_foxglove::LiveView>,
    /// The robot on a Zenoh network, when configured.
    pub zenoh: Option<naobroker_zenoh::ZenohBridge>,
    _cycle: CycleThread,
}

/// Start the broker and its built-in modules on the current actix system.
pub async fn start(config: &Config) -> Result<Running, StartError> {
    config.dcm.check()?;
    config.foxglove.check()?;
    if let Some(zenoh) = &config.zenoh {
        zenoh.check()?;
    }
    let description = match &config.dcm.robot {
        Some(path) => RobotDescription::load(path)?,
        None => RobotDescription::nao_v6(),
    };
    let model = Arc::new(DeviceModel::new(description.clone())?);
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let slots = RtSlots::new(layout);
    let store = Store::new(Arc::clone(&slots), config.memory.store_limits());
    let hardware: Box<dyn Hardware> = match config.dcm.backend {
        Backend::Sim => Box::new(SimRobot::new(&model)),
        Backend::Serial => Box::new(
            SerialBoard::start(config.dcm.serial.clone(), model.actuators.len(), model.sensors.len())
                .map_err(StartError::SerialBackend)?,
        ),
        Backend::Lola => Box::new(LolaRobot::new(config.dcm.lola.clone(), &model)),
    };
    let cycle_config = config.dcm.cycle_config(PRODUCERS);
    let StartedCycle { thread: cycle, mut channels, reports, wake } =
        CycleThread::start(Arc::clone(&model), hardware, slots, dcm_slots, &cycle_config)
            .map_err(StartError::CycleThread)?;
    let dcm = DcmHandle::new(channels.take(DCM_MODULE)?);
    let motion_channel = channels.take(MOTION)?;
    let broker = Broker::start_with_directory(config.broker.to_broker_config()?).await?;
    broker.add_module(ALMemory::new(Arc::clone(&store), broker.clone(), config.memory.clone()))?;
    let dcm_module = Dcm::new(dcm.clone(), reports, wake, broker.clone(), config.dcm.event_decimation)
        .with_preferences(Arc::clone(&store), config.dcm.robot.clone());
    broker.add_module(dcm_module)?;
    let (motion, motion_counters) =
        naobroker_motion::start(&config.motion, &dcm, motion_channel, broker.clone(), config.dcm.priority)?;
    broker.add_module(motion)?;
    broker.add_module(naobroker_sensors::start(&dcm, broker.clone())?)?;
    if dcm.actuator(naobroker_sensors::SONAR_DEVICE).is_ok() {
        broker.add_module(naobroker_sensors::ALSonar::default())?;
    }
    broker.add_module(naobroker_posture::ALRobotPosture::new(broker.clone()))?;
    let qi_endpoints: Vec<String> = naobroker_qi_wire::listen(&broker.port(), &config.qi)
        .await?
        .iter()
        .map(|address| format!("tcp://{address}"))
        .collect();
    let sources = naobroker_foxglove::LiveSources {
        dcm: dcm.clone(),
        motion: Arc::clone(&motion_counters),
        store: Arc::clone(&store),
        broker: broker.clone(),
        robot_description: description,
    };
    let foxglove = naobroker_foxglove::start(&config.foxglove, sources)?;
    if let Some(view) = &foxglove {
        broker.add_module(view.module())?;
    }
    let zenoh = match &config.zenoh {
        Some(zenoh) => {
            let period = std::time::Duration::from_micros(u64::from(dcm.shared().period_us.max(1)));
            let sources = naobroker_zenoh::ZenohSources {
                store: Arc::clone(&store),
                broker: broker.clone(),
                period,
                motion: Arc::clone(&motion_counters),
            };
            let bridge = naobroker_zenoh::start(zenoh, sources)?;
            broker.add_module(bridge.module())?;
            Some(bridge)
        }
        None => None,
    };
    watch::dcm_counters(Arc::clone(dcm.shared()));
    watch::motion_counters(motion_counters);
    let curve_endpoints = config.broker.curve.as_ref().map(|curve| curve.listen.clone()).unwrap_or_default();
    tracing::info!(
        robot = %model.robot,
        backend = ?config.dcm.backend,
        period_us = dcm.shared().period_us,
        clock = ?dcm.shared().clock,
        modules = ?broker.module_names(),
        endpoints = ?config.broker.listen,
        curve_endpoints = ?curve_endpoints,
        qi_endpoints = ?qi_endpoints,
        foxglove = ?foxglove.as_ref().map(naobroker_foxglove::LiveView::address),
        zenoh_robot = ?zenoh.as_ref().map(naobroker_zenoh::ZenohBridge::robot),
        "naobroker ready"
    );
    Ok(Running { broker, dcm, store, foxglove, zenoh, _cycle: cycle })
}
