"""The middle both drivers share: what turns a resolved configuration into
vehicles and their sensor output.  The headless recorder
(:mod:`acres_sim.record`) and the live nodes (:mod:`acres_sim.ros`) never
import each other; each takes from here how a vehicle is built from its
configuration (:mod:`.vehicle`, on the model builders of :mod:`.models`),
how each sensor's samples pass its delay line and become file rows and
encoded messages (:mod:`.channels`, :mod:`.rows`), the message encoders
themselves (:mod:`.messages` one at a time, :mod:`.batches` and :mod:`.cdr`
a block at a time), and the names of topics, frames and mounts
(:mod:`.topics`).  Nothing here imports rclpy or writes files: the recorder
writes the bytes into its bag, the nodes publish them as they are.
"""
