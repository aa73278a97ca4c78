"""Write tests/data/bfcl_tool_schemas.json: BFCL's own JSON-Schema casting of its multi-turn
function docs (``convert_to_tool`` for OpenAI-style models), which tests/integration/test_bfcl_env.py
compares with skillbank_harness.envs.bfcl.tools.json_schema.

BFCL's converter lives in a module that imports tree-sitter parsers pinned to 0.21, so run this
in a throwaway venv, never in the project's:

    python3 -m venv /tmp/bfcl-full && /tmp/bfcl-full/bin/pip install --no-deps bfcl-eval==2026.3.23
    /tmp/bfcl-full/bin/pip install mpmath filelock tenacity tree-sitter==0.21.3 \
        tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
    BFCL_PROJECT_ROOT=/tmp/bfcl-root /tmp/bfcl-full/bin/python scripts/bfcl_schema_snapshot.py
"""

import json
from importlib.metadata import version
from pathlib import Path

from bfcl_eval.constants.enums import ModelStyle
from bfcl_eval.constants.eval_config import MULTI_TURN_FUNC_DOC_PATH
from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
from bfcl_eval.model_handler.utils import convert_to_tool
from bfcl_eval.utils import load_file

CLASSES = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot",
           "TravelAPI", "VehicleControlAPI")

schemas = {}
for name in CLASSES:
    docs = load_file(MULTI_TURN_FUNC_DOC_PATH / MULTI_TURN_FUNC_DOC_FILE_MAPPING[name])
    for tool in convert_to_tool(docs, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS):
        schemas[tool["function"]["name"]] = tool["function"]["parameters"]
out = Path(__file__).resolve().parents[1] / "tests" / "data" / "bfcl_tool_schemas.json"
out.write_text(json.dumps({"bfcl_eval": version("bfcl-eval"), "schemas": schemas}, indent=1,
                          sort_keys=True) + "\n")
print(f"{len(schemas)} schemas -> {out}")
