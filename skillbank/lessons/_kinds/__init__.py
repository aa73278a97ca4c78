"""One module per lesson kind; importing this package registers them all.

To add a kind: write its module (its class, sentence, section, delivery and, if a tool call can
break it, its call check) and add it to the import below.
"""

from skillbank.lessons._kinds import (  # noqa: F401  (registration, in the order kinds are listed)
    procedure, check_first, missing_tool, missing_parameter, ask_for, unknown_field, budget, pitfall,
    guidance, tool_error, policy, wrong_tool_name, no_tool, answer_unit, stated_value,
)
