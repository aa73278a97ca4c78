"""skillbank's harness: verifiable environments, the simulated policy and the demo.

It imports the library and plugs into the ``skillbank`` command through entry points
(``skillbank_harness.cli``); the library never imports it.
"""
