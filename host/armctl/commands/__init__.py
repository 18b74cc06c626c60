# SPDX-License-Identifier: MIT
"""One module per `armctl` subcommand.

Each module defines NAME, HELP, add_arguments(parser) and run(args) -> exit
code; armctl.cli finds them by listing this package, so adding a subcommand
is adding a file.
"""
