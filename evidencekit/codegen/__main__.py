import sys

from evidencekit.codegen._cli import main

sys.exit(main())
