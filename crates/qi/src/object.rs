//! An object reference (`o`): the object's MetaObject, the service and object ids it is
//! reached at, and, when both peers share `ObjectPtrUID`, the 20-byte uid that identifies it.

use crate::reader::{put_u32, Reader};
use crate::{DecodeError, EncodeError, MetaObject, Options};

/// Bytes of an object's uid.
pub const OBJECT_UID_BYTES: usize = 20;

/// An object passed by reference (a method's `o` return, such as `ALMemory.subscriber`).
/// This is the form without `MetaObjectCache`, which this codec never advertises.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectRef {
    pub meta_object: MetaObject,
    pub service: u32,
    /// The object's id within the service; 0 is the null object.
    pub object: u32,
    /// Present exactly when the peers share `ObjectPtrUID` ([`Options::object_uid`]).
    pub uid: Option<[u8; OBJECT_UID_BYTES]>,
}

impl ObjectRef {
    pub fn encode(&self, out: &mut Vec<u8>, options: &Options) -> Result<(), EncodeError> {
        self.meta_object.encode(out)?;
        put_u32(out, self.service);
        put_u32(out, self.object);
        if options.object_uid {
            let uid = self.uid.ok_or(EncodeError::MissingObjectUid)?;
            out.extend_from_slice(&uid);
        }
        Ok(())
    }

    /// Read a reference from `reader`, with the uid when `options.object_uid`.
    pub fn decode_from(reader: &mut Reader<'_>, options: &Options) -> Result<ObjectRef, DecodeError> {
        let meta_object = MetaObject::decode_from(reader)?;
        let service = reader.read_u32()?;
        let object = reader.read_u32()?;
        let uid = match options.object_uid {
            false => None,
            true => Some(reader.read_bytes(OBJECT_UID_BYTES as u64)?.try_into().expect("20 bytes were read")),
        };
        Ok(ObjectRef { meta_object, service, object, uid })
    }
}
