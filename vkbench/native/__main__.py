import sys

from vkbench.native import main

sys.exit(main())
