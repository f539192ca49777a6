#!/usr/bin/env python
"""Django's command-line utility for MedCite."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from config.startup import misconfiguration_exits

    with misconfiguration_exits():
        execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
