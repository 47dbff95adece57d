import sys

from evidencekit.codegen.cli import main

sys.exit(main())
