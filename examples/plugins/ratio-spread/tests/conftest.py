"""The example's tests need the distribution installed (its entry point is what they load):
``pip install -e examples/plugins/ratio-spread``, as scripts/setup.sh does. Without it the
main suite does not collect them; tests/plugins/test_registry.py says why it skips."""

import os
from importlib.util import find_spec

# CI sets TOPOSPREAD_REQUIRE_PLUGINS=1: there a missing install fails the tests instead.
collect_ignore_glob = (
    []
    if find_spec("topospread_ratio_spread") or os.environ.get("TOPOSPREAD_REQUIRE_PLUGINS") == "1"
    else ["test_*.py"]
)
