"""The rclpy message class of a type name as the pipeline writes it
(``'sensor_msgs/msg/NavSatFix'``), for publishers of the pipeline's topics."""

import importlib

__all__ = ['message_class']


def message_class(type_name):
    """The class of ``package/msg/Type``."""
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)
