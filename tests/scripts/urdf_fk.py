"""Forward kinematics of a URDF by yourdfpy (a URDF library from PyPI, not ours).

Reads {"urdf": PATH, "root": LINK, "links": [...], "postures": [{JOINT: ANGLE, ...}, ...]}
as JSON on stdin; prints, per posture, each link's 4x4 transform in the root link's frame
(row-major, 16 numbers) as one JSON document.
"""

import json
import sys

import yourdfpy

request = json.load(sys.stdin)
robot = yourdfpy.URDF.load(request["urdf"], build_scene_graph=True, load_meshes=False)
answers = []
for posture in request["postures"]:
    robot.update_cfg({name: angle for name, angle in posture.items() if name in robot.actuated_joint_names})
    answers.append(
        {
            link: [float(x) for x in robot.get_transform(frame_to=link, frame_from=request["root"]).flatten()]
            for link in request["links"]
        }
    )
json.dump({"actuated": robot.actuated_joint_names, "transforms": answers}, sys.stdout)
