//! One MuJoCo model and its data, owned together: names to ids, the state as slices,
//! stepping, contacts and rays. Every raw pointer stays in this file.

use std::ffi::{c_char, c_int, CString};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::ffi::{mjData, mjModel};
use crate::library::{api, Api, Contact};
use crate::MujocoError;

/// MuJoCo's number of geom groups (`mjNGROUP`).
const GROUPS: usize = 6;

/// Kinds of named objects (MuJoCo's `mjtObj` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Body = 1,
    Joint = 3,
    Geom = 5,
    Site = 6,
    Actuator = 19,
    Sensor = 20,
}

/// One active contact: the two geoms and the force pressing them together (N, ≥ 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
    pub geoms: [usize; 2],
    pub normal_force: f64,
}

/// A compiled model and its data. Deterministic: the same model, state and inputs give
/// bit-identical results (MuJoCo runs on this thread only).
pub struct Simulation {
    api: Arc<Api>,
    model: NonNull<mjModel>,
    data: NonNull<mjData>,
}

// SAFETY: the model and data are owned by this value alone and used through `&self` /
// `&mut self`, so moving it to another thread moves their only user.
unsafe impl Send for Simulation {}

impl Drop for Simulation {
    fn drop(&mut self) {
        // SAFETY: both were made by this library and are freed once, data first.
        unsafe {
            (self.api.delete_data)(self.data.as_ptr());
            (self.api.delete_model)(self.model.as_ptr());
        }
    }
}

impl Simulation {
    /// Compile an MJCF document (loading MuJoCo on first use) and make its data.
    pub fn from_xml(xml: &str) -> Result<Simulation, MujocoError> {
        let api = api()?;
        let text = CString::new(xml).map_err(|_| MujocoError::NulInModel)?;
        let mut error = [0 as c_char; 1024];
        // SAFETY: the text is NUL-terminated, the error buffer's size is passed, no VFS; the
        // spec is deleted once compiled, whether or not that worked.
        let model = unsafe {
            let spec = (api.parse_xml_string)(text.as_ptr(), std::ptr::null(), error.as_mut_ptr(), 1024);
            if spec.is_null() {
                return Err(MujocoError::Model(message(&error)));
            }
            let model = (api.compile)(spec, std::ptr::null());
            (api.delete_spec)(spec);
            NonNull::new(model).ok_or_else(|| MujocoError::Model("compilation failed".into()))?
        };
        // SAFETY: a valid model; on failure the model is freed here.
        let data = unsafe {
            match NonNull::new((api.make_data)(model.as_ptr())) {
                Some(data) => data,
                None => {
                    (api.delete_model)(model.as_ptr());
                    return Err(MujocoError::Model("no memory for its data".into()));
                }
            }
        };
        Ok(Simulation { api, model, data })
    }

    fn m(&self) -> &mjModel {
        // SAFETY: valid from construction to drop.
        unsafe { self.model.as_ref() }
    }

    fn d(&self) -> &mjData {
        // SAFETY: valid from construction to drop.
        unsafe { self.data.as_ref() }
    }

    /// The id of the object of `kind` called `name`.
    pub fn id(&self, kind: Object, name: &str) -> Option<usize> {
        let name = CString::new(name).ok()?;
        // SAFETY: valid model, NUL-terminated name.
        let id = unsafe { (self.api.name2id)(self.model.as_ptr(), kind as c_int, name.as_ptr()) };
        usize::try_from(id).ok()
    }

    /// Seconds per step.
    pub fn timestep(&self) -> f64 {
        self.m().opt.timestep
    }

    /// Simulated seconds since the start.
    pub fn time(&self) -> f64 {
        self.d().time
    }

    /// Where `joint`'s position is in [`Simulation::qpos`].
    pub fn joint_qpos_address(&self, joint: usize) -> usize {
        self.model_ints(self.m().jnt_qposadr, self.m().njnt)[joint] as usize
    }

    /// Where `joint`'s velocity is in [`Simulation::qvel`].
    pub fn joint_dof_address(&self, joint: usize) -> usize {
        self.model_ints(self.m().jnt_dofadr, self.m().njnt)[joint] as usize
    }

    /// The mass of everything at and below `body` (the world's: the whole model).
    pub fn subtree_mass(&self, body: usize) -> f64 {
        self.numbers(self.m().body_subtreemass, self.m().nbody)[body]
    }

    /// `sensor`'s values in [`Simulation::sensordata`]: (address, dimension).
    pub fn sensor_span(&self, sensor: usize) -> (usize, usize) {
        let adr = self.model_ints(self.m().sensor_adr, self.m().nsensor)[sensor] as usize;
        (adr, self.model_ints(self.m().sensor_dim, self.m().nsensor)[sensor] as usize)
    }

    pub fn qpos(&self) -> &[f64] {
        self.numbers(self.d().qpos, self.m().nq)
    }

    pub fn qpos_mut(&mut self) -> &mut [f64] {
        let (ptr, len) = (self.d().qpos, self.m().nq);
        self.numbers_mut(ptr, len)
    }

    pub fn qvel(&self) -> &[f64] {
        self.numbers(self.d().qvel, self.m().nv)
    }

    /// One control per actuator.
    pub fn ctrl_mut(&mut self) -> &mut [f64] {
        let (ptr, len) = (self.d().ctrl, self.m().nu);
        self.numbers_mut(ptr, len)
    }

    /// A force and torque (world frame, at the body's centre of mass) per body, applied at
    /// every step until changed: `[fx, fy, fz, tx, ty, tz]`.
    pub fn applied_force_mut(&mut self, body: usize) -> &mut [f64] {
        let (ptr, len) = (self.d().xfrc_applied, self.m().nbody * 6);
        &mut self.numbers_mut(ptr, len)[body * 6..body * 6 + 6]
    }

    /// Every sensor's values, one after another ([`Simulation::sensor_span`]).
    pub fn sensordata(&self) -> &[f64] {
        self.numbers(self.d().sensordata, self.m().nsensordata)
    }

    /// A body's frame origin, world frame.
    pub fn body_position(&self, body: usize) -> [f64; 3] {
        triple(self.numbers(self.d().xpos, self.m().nbody * 3), body)
    }

    /// A body's orientation, world frame, as a unit quaternion `[w, x, y, z]`.
    pub fn body_quaternion(&self, body: usize) -> [f64; 4] {
        let all = self.numbers(self.d().xquat, self.m().nbody * 4);
        [all[body * 4], all[body * 4 + 1], all[body * 4 + 2], all[body * 4 + 3]]
    }

    /// The centre of mass of everything at and below `body`, world frame.
    pub fn subtree_com(&self, body: usize) -> [f64; 3] {
        triple(self.numbers(self.d().subtree_com, self.m().nbody * 3), body)
    }

    /// A geom's centre, world frame.
    pub fn geom_position(&self, geom: usize) -> [f64; 3] {
        triple(self.numbers(self.d().geom_xpos, self.m().ngeom * 3), geom)
    }

    /// A site's position, world frame.
    pub fn site_position(&self, site: usize) -> [f64; 3] {
        triple(self.numbers(self.d().site_xpos, self.m().nsite * 3), site)
    }

    /// A site's orientation, world frame, as a 3×3 matrix's rows.
    pub fn site_rotation(&self, site: usize) -> [[f64; 3]; 3] {
        let all = self.numbers(self.d().site_xmat, self.m().nsite * 9);
        std::array::from_fn(|row| std::array::from_fn(|col| all[site * 9 + row * 3 + col]))
    }

    /// The contacts of the last step, with their normal forces.
    pub fn contacts(&self) -> impl Iterator<Item = ContactPoint> + '_ {
        let count = self.d().ncon.max(0) as usize;
        let contacts: &[Contact] = if count == 0 {
            &[]
        } else {
            // SAFETY: `contact` holds `ncon` contacts after a step or forward.
            unsafe { std::slice::from_raw_parts(self.d().contact, count) }
        };
        contacts.iter().enumerate().map(move |(index, contact)| {
            let mut force = [0.0f64; 6];
            // SAFETY: `index` < ncon; the result has room for 6 numbers.
            unsafe {
                (self.api.contact_force)(
                    self.model.as_ptr(),
                    self.data.as_ptr(),
                    index as c_int,
                    force.as_mut_ptr(),
                )
            };
            ContactPoint {
                geoms: [contact.geom1.max(0) as usize, contact.geom2.max(0) as usize],
                normal_force: force[0].max(0.0),
            }
        })
    }

    /// The distance along the unit `direction` from `from` to the first geom of geom group
    /// `group` (any group: `None`) hit, leaving out `exclude_body`'s geoms; `None` when
    /// nothing is hit.
    pub fn ray(
        &self,
        from: [f64; 3],
        direction: [f64; 3],
        group: Option<usize>,
        exclude_body: Option<usize>,
    ) -> Option<f64> {
        let mut geom: c_int = -1;
        let groups: [u8; GROUPS] =
            std::array::from_fn(|index| u8::from(group.is_none_or(|group| group == index)));
        // SAFETY: 3-element inputs, mjNGROUP group flags, a 1-element output, no normal.
        let distance = unsafe {
            (self.api.ray)(
                self.model.as_ptr(),
                self.data.as_ptr(),
                from.as_ptr(),
                direction.as_ptr(),
                groups.as_ptr(),
                1,
                exclude_body.map_or(-1, |body| body as c_int),
                &mut geom,
                std::ptr::null_mut(),
            )
        };
        (geom >= 0 && distance >= 0.0).then_some(distance)
    }

    /// One step of `timestep` seconds.
    pub fn step(&mut self) {
        // SAFETY: valid model and data.
        unsafe { (self.api.step)(self.model.as_ptr(), self.data.as_ptr()) }
    }

    /// Positions, contacts and sensors recomputed from the state, without advancing time.
    pub fn forward(&mut self) {
        // SAFETY: valid model and data.
        unsafe { (self.api.forward)(self.model.as_ptr(), self.data.as_ptr()) }
    }

    fn numbers(&self, ptr: *mut f64, len: i64) -> &[f64] {
        if len <= 0 {
            return &[];
        }
        // SAFETY: `ptr` is an array of `len` numbers owned by the model or data.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }

    fn numbers_mut(&mut self, ptr: *mut f64, len: i64) -> &mut [f64] {
        if len <= 0 {
            return &mut [];
        }
        // SAFETY: as `numbers`, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) }
    }

    fn model_ints(&self, ptr: *mut c_int, len: i64) -> &[c_int] {
        if len <= 0 {
            return &[];
        }
        // SAFETY: `ptr` is a model array of `len` ints.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }
}

fn triple(all: &[f64], index: usize) -> [f64; 3] {
    [all[index * 3], all[index * 3 + 1], all[index * 3 + 2]]
}

fn message(buffer: &[c_char]) -> String {
    let bytes: Vec<u8> = buffer.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOX_ON_PLANE: &str = r#"<mujoco>
      <option timestep="0.002"/>
      <worldbody>
        <geom name="floor" type="plane" size="1 1 0.1"/>
        <body name="box" pos="0 0 0.5">
          <freejoint/>
          <geom name="box" type="box" size="0.05 0.05 0.05" mass="2"/>
          <site name="centre"/>
        </body>
      </worldbody>
      <sensor><accelerometer name="acc" site="centre"/></sensor>
    </mujoco>"#;

    #[test]
    fn a_box_falls_onto_the_plane_and_rests_on_it_with_its_weight() {
        let mut sim = Simulation::from_xml(BOX_ON_PLANE).expect("MuJoCo loads (see INSTALL_HINT)");
        let body = sim.id(Object::Body, "box").unwrap();
        let floor = sim.id(Object::Geom, "floor").unwrap();
        assert_eq!(sim.id(Object::Body, "nothing"), None);
        for _ in 0..1000 {
            sim.step();
        }
        assert!((sim.time() - 2.0).abs() < 1e-9);
        let z = sim.body_position(body)[2];
        assert!((z - 0.05).abs() < 0.002, "resting on the plane: z = {z}");
        let weight: f64 = sim.contacts().filter(|c| c.geoms.contains(&floor)).map(|c| c.normal_force).sum();
        assert!((weight - 2.0 * 9.81).abs() < 0.05, "contact forces carry the weight: {weight} N");
        let (adr, dim) = sim.sensor_span(sim.id(Object::Sensor, "acc").unwrap());
        assert_eq!(dim, 3);
        assert!((sim.sensordata()[adr + 2] - 9.81).abs() < 0.05, "proper acceleration at rest is +g");
        assert_eq!(
            sim.ray([0.0, 0.0, 1.0], [0.0, 0.0, -1.0], None, Some(body)).map(|d| (d * 1e6).round()),
            Some(1e6)
        );
    }

    #[test]
    fn a_model_it_refuses_is_an_error_naming_why() {
        let error =
            Simulation::from_xml("<mujoco><worldbody><geom type=\"box\"/></worldbody>").err().unwrap();
        assert!(matches!(error, MujocoError::Model(_)), "{error}");
    }
}
