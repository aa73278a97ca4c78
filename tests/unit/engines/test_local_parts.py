"""The local model's parts that need no model: tool-call parsing, the chat template, the spec
resolver and the missing-extra error."""

import json
import sys

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from skillbank.chat import ModelSpecError, MissingProviderError, resolve_chat_model, with_seed
from skillbank.errors import MissingExtraError
from skillbank._engines.local.template import ChatTemplate, TemplateError, to_template_messages
from skillbank._engines.local.toolcalls import parse_tool_calls

# -- tool calls, however a small model writes them -----------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
     [("get_weather", {"city": "Oslo"})]),
    ('Sure.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
     [("get_weather", {"city": "Oslo"})]),
    ('{"name": "get_weather", "arguments": {"city": "Oslo"}}', [("get_weather", {"city": "Oslo"})]),
    # the doubled braces of Qwen's template example, copied literally
    ('{{"name": "set_timer", "arguments": {{"minutes": 5}}}}', [("set_timer", {"minutes": 5})]),
    # only the opening braces doubled (seen on the 1.5B model)
    ('{{"name": "check", "arguments": {"order_id": "ORD-1"}}', [("check", {"order_id": "ORD-1"})]),
    # two bare objects, the second with its arguments as a JSON string
    ('{"name": "a", "arguments": {"x": 1}}\n{"name": "b", "arguments": "{\\"y\\": 2}"}',
     [("a", {"x": 1}), ("b", {"y": 2})]),
    ('[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"z": true}}]',
     [("a", {}), ("b", {"z": True})]),
    ('{"type": "function", "function": {"name": "a", "arguments": {"x": 1}}}', [("a", {"x": 1})]),
    ('<tool_call>\n{"name": "a", "arguments": {"x": 1}', [("a", {"x": 1})]),  # cut off
    ('<tools>\n{"name": "a", "arguments": {"x": 1}}\n</tools>', [("a", {"x": 1})]),
    # the values written into the schema's shape
    ('```json\n{"name": "find_contact", "arguments": {"properties": {"name": "Omar"}, '
     '"required": ["name"], "type": "object"}}\n```', [("find_contact", {"name": "Omar"})]),
])
def test_tool_calls_are_parsed_in_every_form_a_small_model_writes(text, expected):
    content, calls = parse_tool_calls(text)
    assert [(c["name"], c["args"]) for c in calls] == expected
    assert all(c["type"] == "tool_call" and c["id"].startswith("call_") for c in calls)
    assert "{" not in content and "tool" not in content


@pytest.mark.parametrize("text", [
    "The temperature is {\"temp\": 3} today.",  # JSON, but not a call
    "Hello! How can I help?",
    '{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {}}}}',  # a schema echo
    '{"name": "get weather!", "arguments": {}}',  # not a tool name
])
def test_text_that_is_not_a_call_stays_text(text):
    content, calls = parse_tool_calls(text)
    assert calls == [] and content == text.strip()


def test_text_around_calls_is_kept():
    content, calls = parse_tool_calls('I will look it up.\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>')
    assert content == "I will look it up." and len(calls) == 1


# -- the GGUF's chat template -----------------------------------------------------------------

# The tool parts of Qwen2.5's template, as stored in its GGUF (abridged: no default system turn).
QWEN_LIKE = """{%- if tools %}<|im_start|>system
{{ messages[0]['content'] }}
# Tools
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>
{{ '<tool_call>\n{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>' }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "user" or (message.role == "assistant" and not message.tool_calls) %}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{%- elif message.role == "assistant" %}
<|im_start|>assistant{% for tool_call in message.tool_calls %}{% set tool_call = tool_call.function %}
<tool_call>
{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}
</tool_call>{% endfor %}<|im_end|>
{%- elif message.role == "tool" %}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{%- endif %}
{%- endfor %}
{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def test_the_template_renders_tool_calls_and_tool_results():
    messages = [SystemMessage("Be brief."), HumanMessage("Weather in Oslo & Bergen?"),
                AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo <N>"},
                                           "id": "c1", "type": "tool_call"}]),
                ToolMessage('{"temperature_c": -3}', tool_call_id="c1", name="get_weather")]
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "x < y",
                                               "parameters": {"type": "object"}}}]
    prompt = ChatTemplate(QWEN_LIKE).render(to_template_messages(messages), tools)
    # the tool result reaches the model (chatml-function-calling drops it)
    assert '<tool_response>\n{"temperature_c": -3}\n</tool_response>' in prompt
    assert '{"name": "get_weather", "arguments": {"city": "Oslo <N>"}}' in prompt
    assert '"description": "x < y"' in prompt  # tojson does not HTML-escape
    assert "Weather in Oslo & Bergen?" in prompt  # no autoescape: a prompt, not HTML
    assert prompt.rstrip().endswith("<|im_start|>assistant")


def test_several_system_messages_become_one_system_turn():
    out = to_template_messages([HumanMessage("hi"), SystemMessage("A"), SystemMessage("B")])
    assert out[0] == {"role": "system", "content": "A\n\nB"} and out[1]["role"] == "user"


def test_templates_run_sandboxed_and_fail_clearly():
    with pytest.raises(TemplateError):
        ChatTemplate("{{ ''.__class__.__mro__[1].__subclasses__() }}").render([])
    with pytest.raises(TemplateError, match="not valid jinja2"):
        ChatTemplate("{% for %}")
    with pytest.raises(TemplateError, match="no system"):
        ChatTemplate("{{ raise_exception('no system') }}").render([])


# -- one resolver for model specs ---------------------------------------------------------------


def test_a_chat_model_object_passes_through_and_with_seed_leaves_seedless_models_alone():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["ok"])
    assert resolve_chat_model(model) is model
    assert with_seed(model, 3) is model
    with pytest.raises(ModelSpecError, match="not a chat model"):
        resolve_chat_model(42)
    with pytest.raises(ModelSpecError, match="empty"):
        resolve_chat_model("  ")


def test_local_specs_name_a_file_or_a_fetched_size(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBANK_MODELS", str(tmp_path / "models"))
    with pytest.raises(ModelSpecError, match="skillbank model fetch --size 0.5b"):
        resolve_chat_model("local:0.5b")
    with pytest.raises(ModelSpecError, match="no GGUF file at"):
        resolve_chat_model(f"local:{tmp_path / 'nope.gguf'}")
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    model = resolve_chat_model(f"local:{gguf}", temperature=0.1)
    assert model.model_path == str(gguf) and model.temperature == 0.1
    assert with_seed(model, 9).seed == 9 and model.seed is None  # a copy


def test_provider_specs_without_their_package_say_what_to_install():
    try:
        import langchain_anthropic  # noqa: F401
        pytest.skip("langchain-anthropic is installed here")
    except ImportError:
        pass
    with pytest.raises(MissingProviderError, match="pip install langchain-anthropic"):
        resolve_chat_model("anthropic:claude-3-5-haiku-latest")
    with pytest.raises(ModelSpecError):
        resolve_chat_model("nosuchprovider:some-model")


def test_the_local_model_without_llama_cpp_names_the_extra(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp -> ImportError
    model = resolve_chat_model(f"local:{gguf}")
    with pytest.raises(MissingExtraError, match=r"pip install 'skillbank\[local\]'") as info:
        model.invoke("hi")
    assert "llama-cpp-python" in str(info.value)


def test_the_distiller_and_the_judge_take_specs_through_the_resolver(tmp_path):
    from skillbank.adapters.judge import LLMJudge
    from skillbank.evolution.llm import LLMDistiller

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    distiller = LLMDistiller(f"local:{gguf}")
    assert distiller.model.model_path == str(gguf) and distiller.model.temperature == 0.0
    assert distiller.name == f"llm:local:{gguf.name}"
    judge = LLMJudge(f"local:{gguf}")
    assert judge.model.model_path == str(gguf)
    with pytest.raises(ModelSpecError, match="no GGUF file"):
        LLMJudge("local:/nonexistent/model.gguf")
    assert json.dumps(judge.model._identifying_params)


def test_eval_gives_each_trial_its_seed_on_a_local_model(tmp_path):
    from skillbank.cli._eval import _per_trial, load_chat_model

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    factory = _per_trial(load_chat_model(f"local:{gguf}"))
    assert factory(None, 5).seed == 5 and factory(None, 6).seed == 6
