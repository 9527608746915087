//! ServiceInfo, what the ServiceDirectory says of a service: its name, id, machine, process,
//! endpoints, session and object uid, in libqi's 7-field form or the legacy 6-field one.

use crate::reader::{put_bytes, put_len, put_u32, Reader};
use crate::{DecodeError, EncodeError};

/// One service as the ServiceDirectory describes it (`service`, `services`, `registerService`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServiceInfo {
    pub name: String,
    pub service_id: u32,
    /// The machine's id; a client reuses its ServiceDirectory socket when this equals the
    /// directory's `machineId` and an endpoint is the socket's or `qi:ServiceDirectory`.
    pub machine_id: String,
    pub process_id: u32,
    /// URIs: `tcp://host:port`, or `qi:Name` for a peer that shares `RelativeEndpointURI`.
    pub endpoints: Vec<String>,
    pub session_id: String,
    /// 20 raw bytes, or none (the ServiceDirectory's own entry); not in the legacy form.
    pub object_uid: Vec<u8>,
}

impl ServiceInfo {
    /// The 7-field signature libqi ≥ 2.9 advertises.
    pub const SIGNATURE: &'static str = "(sIsI[s]ss)<ServiceInfo,name,serviceId,machineId,processId,\
        endpoints,sessionId,objectUid>";
    /// The 6-field signature of peers older than libqi 2.9 (no `objectUid`).
    pub const LEGACY_SIGNATURE: &'static str =
        "(sIsI[s]s)<ServiceInfo,name,serviceId,machineId,processId,endpoints,sessionId>";

    /// Append the 7-field form.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.encode_legacy(out)?;
        put_bytes(out, &self.object_uid)
    }

    /// Append the legacy 6-field form (no `objectUid`).
    pub fn encode_legacy(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        put_bytes(out, self.name.as_bytes())?;
        put_u32(out, self.service_id);
        put_bytes(out, self.machine_id.as_bytes())?;
        put_u32(out, self.process_id);
        put_len(out, "endpoint list", self.endpoints.len())?;
        for endpoint in &self.endpoints {
            put_bytes(out, endpoint.as_bytes())?;
        }
        put_bytes(out, self.session_id.as_bytes())
    }

    /// Read the 7-field form from `reader`, leaving what follows it.
    pub fn decode_from(reader: &mut Reader<'_>) -> Result<ServiceInfo, DecodeError> {
        let mut info = Self::decode_legacy_from(reader)?;
        info.object_uid = reader.read_len_bytes()?.to_vec();
        Ok(info)
    }

    /// Read the legacy 6-field form from `reader` (`object_uid` left empty).
    pub fn decode_legacy_from(reader: &mut Reader<'_>) -> Result<ServiceInfo, DecodeError> {
        let name = reader.read_string("service name")?;
        let service_id = reader.read_u32()?;
        let machine_id = reader.read_string("machine id")?;
        let process_id = reader.read_u32()?;
        let count = reader.read_count(4)?;
        let mut endpoints = Vec::with_capacity((count as usize).min(reader.remaining() / 4));
        for _ in 0..count {
            endpoints.push(reader.read_string("endpoint")?);
        }
        let session_id = reader.read_string("session id")?;
        Ok(ServiceInfo {
            name,
            service_id,
            machine_id,
            process_id,
            endpoints,
            session_id,
            object_uid: Vec::new(),
        })
    }

    /// Decode a whole payload holding one 7-field ServiceInfo (a `service` reply).
    pub fn decode(bytes: &[u8]) -> Result<ServiceInfo, DecodeError> {
        let mut reader = Reader::new(bytes);
        let info = Self::decode_from(&mut reader)?;
        reader.finish()?;
        Ok(info)
    }

    /// Append a list of 7-field ServiceInfos (a `services` reply).
    pub fn encode_list(infos: &[ServiceInfo], out: &mut Vec<u8>) -> Result<(), EncodeError> {
        put_len(out, "service list", infos.len())?;
        infos.iter().try_for_each(|info| info.encode(out))
    }

    /// Append a list of legacy 6-field ServiceInfos.
    pub fn encode_legacy_list(infos: &[ServiceInfo], out: &mut Vec<u8>) -> Result<(), EncodeError> {
        put_len(out, "service list", infos.len())?;
        infos.iter().try_for_each(|info| info.encode_legacy(out))
    }

    /// Decode a whole payload holding a list of 7-field ServiceInfos.
    pub fn decode_list(bytes: &[u8]) -> Result<Vec<ServiceInfo>, DecodeError> {
        let mut reader = Reader::new(bytes);
        // Four empty strings, two ids and an empty endpoint list.
        let count = reader.read_count(28)?;
        let mut infos = Vec::with_capacity((count as usize).min(reader.remaining() / 28));
        for _ in 0..count {
            infos.push(Self::decode_from(&mut reader)?);
        }
        reader.finish()?;
        Ok(infos)
    }
}
