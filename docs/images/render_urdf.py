"""Draw `naocli urdf`'s model with MuJoCo's renderer (docs/images/nao-urdf.png).

    naocli urdf --out nao.urdf
    MUJOCO_GL=osmesa python3 docs/images/render_urdf.py nao.urdf docs/images/nao-urdf.png

MuJoCo reads the URDF itself; the only thing added is its own compiler tag, so that it keeps
the URDF's visual shapes (it keeps only collision shapes by default). The robot stands in
StandInit's angles (NAOqi's posture table), the floor under the soles.
Needs mujoco, numpy and pillow.
"""

import sys

import mujoco
import numpy as np
from PIL import Image

STAND_INIT = {
    "HeadPitch": -0.17, "LShoulderPitch": 1.40, "LShoulderRoll": 0.30, "LElbowYaw": -1.39,
    "LElbowRoll": -1.00, "LWristYaw": 0.0, "LHipPitch": -0.45, "LKneePitch": 0.70,
    "LAnklePitch": -0.35, "RShoulderPitch": 1.40, "RShoulderRoll": -0.30, "RElbowYaw": 1.39,
    "RElbowRoll": 1.00, "RWristYaw": 0.0, "RHipPitch": -0.45, "RKneePitch": 0.70,
    "RAnklePitch": -0.35,
}

urdf_path, png_path = sys.argv[1], sys.argv[2]
urdf = open(urdf_path).read()
urdf = urdf.replace(
    '<material name="shell">',
    '<mujoco><compiler discardvisual="false" fusestatic="false" balanceinertia="true"/></mujoco>\n'
    '  <material name="shell">',
    1,
)
spec = mujoco.MjSpec.from_string(urdf)
world = spec.worldbody
floor = world.add_geom()
floor.name = "floor"
floor.type = mujoco.mjtGeom.mjGEOM_PLANE
floor.size = [1, 1, 0.01]
floor.rgba = [0.55, 0.6, 0.55, 1]
light = world.add_light()
light.pos = [0.5, -0.5, 1.5]
light.dir = [-0.3, 0.3, -1]
spec.visual.global_.offwidth, spec.visual.global_.offheight = 960, 720


def posed(spec):
    """The compiled model, lit, and its data in StandInit's angles."""
    model = spec.compile()
    model.vis.headlight.ambient[:] = [0.45, 0.45, 0.45]
    model.vis.headlight.diffuse[:] = [0.5, 0.5, 0.5]
    data = mujoco.MjData(model)
    for name, angle in STAND_INIT.items():
        data.qpos[model.joint(name).qposadr[0]] = angle
    mujoco.mj_kinematics(model, data)
    return model, data


model, data = posed(spec)
# The URDF's root is the torso, fixed in the world: the floor goes under the soles (boxes).
sole = min(
    data.geom_xpos[g][2] - model.geom_size[g][2]
    for g in range(model.ngeom)
    if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX and model.geom_bodyid[g] > 1
)
floor.pos = [0, 0, sole]
model, data = posed(spec)

renderer = mujoco.Renderer(model, 720, 960)
camera = mujoco.MjvCamera()
camera.lookat[:] = [0.0, 0.0, sole + 0.25]
camera.distance, camera.azimuth, camera.elevation = 1.0, 150, -15
renderer.update_scene(data, camera)
image = renderer.render()

Image.fromarray(np.asarray(image)).save(png_path)
print(png_path, image.shape)
