"""The GNSS receiver model in the position domain (spec: GNSS Receiver): the
synthetic constellation, the sky view with its obstacles, DOP and multipath,
and the receiver's other blocks.  numpy and numba only; nothing here imports ROS.
"""
