"""What the gate's reach check reads as a task's request (validation's ``_request_messages``)."""

from langchain_core.messages import HumanMessage

from skillbank.consistency.validation import _request_messages


def test_messages_are_read_as_messages():
    got = _request_messages({"messages": [{"role": "user", "content": "refund order A1"}]})
    assert [(m.type, m.content) for m in got] == [("human", "refund order A1")]


def test_text_is_one_human_message():
    got = _request_messages("refund order A1")
    assert [(m.type, m.content) for m in got] == [("human", "refund order A1")]


def test_messages_langchain_cannot_read_fall_back_to_the_task_text():
    task = {"text": "refund order A1", "messages": [{"role": "no-such-role", "content": "x"}]}
    got = _request_messages(task)
    assert len(got) == 1 and isinstance(got[0], HumanMessage) and got[0].content == "refund order A1"


def test_empty_messages_fall_back_to_the_task_text():
    got = _request_messages({"prompt": "what is the weather", "messages": []})
    assert [m.content for m in got] == ["what is the weather"]
