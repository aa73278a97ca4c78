"""Customer service for an online shop: orders, refunds, cancellations, addresses.

Policies (stated in the action tools' descriptions, enforced by the verifiers):
``check_refund_eligibility`` before ``issue_refund`` and refund only eligible orders;
``get_order`` before ``cancel_order`` and before ``update_address``.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from skillbank import Lesson, LessonKind
from skillbank_harness.envs.base import (
    EnvError,
    Environment,
    NoArgs,
    RefStep,
    Spec,
    blocker_named,
    no_value_claim,
    param_not_passed,
    template,
)

ITEMS = (
    "wireless headphones", "running shoes", "coffee grinder", "desk lamp", "yoga mat",
    "backpack", "electric kettle", "phone case", "rain jacket", "board game", "water bottle",
    "bluetooth speaker", "cast iron pan", "sunglasses",
)
STREETS = ("Elm Street", "Harbour Road", "Station Lane", "Mill Avenue", "Oak Crescent", "King's Way")
CITIES = ("Leeds", "Bristol", "York", "Bath", "Derby", "Exeter")
# Any date, standalone number or day word in a sentence about delivery is a claimed value.
_WHEN = (r"\b\d{4}-\d{2}-\d{2}\b|(?<![\w-])\d+(?![\w-])|\b(?:today|tomorrow|monday|tuesday|"
         r"wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
         r"august|september|october|november|december)\b")


class RetailEnv(Environment):
    family = "retail"
    system_prompt = (
        "You are a customer-service agent for an online shop. Help the signed-in customer with "
        "their orders using the tools, then answer briefly."
    )


class OrderArgs(BaseModel):
    order_id: str = Field(description="Order id, e.g. ORD-1234.")


class CancelArgs(OrderArgs):
    cancel_reason: Optional[Literal["ordered_by_mistake", "found_cheaper", "arrives_too_late"]] = Field(
        None, description="Why the order is cancelled, if the customer said.")


REASONS = {"ordered_by_mistake": "ordered it by mistake", "found_cheaper": "found it cheaper",
           "arrives_too_late": "it arrives too late"}


class AddressArgs(OrderArgs):
    address: str = Field(description="The new shipping address.")


@RetailEnv.tool("list_orders", "List the customer's orders: order_id, item and status of each.", NoArgs)
def list_orders(env: RetailEnv) -> dict:
    return {"orders": [{"order_id": o["order_id"], "item": o["item"], "status": o["status"]}
                       for o in env.state["orders"]]}


@RetailEnv.tool(
    "get_order",
    "Get one order's details: item, status, amount, estimated_delivery date and shipping_address.",
    OrderArgs,
)
def get_order(env: RetailEnv, order_id: str) -> dict:
    o = _order(env, order_id)
    return {k: o[k] for k in ("order_id", "item", "status", "amount", "estimated_delivery",
                              "shipping_address")}


@RetailEnv.tool("check_refund_eligibility", "Check whether an order is eligible for a refund.", OrderArgs)
def check_refund_eligibility(env: RetailEnv, order_id: str) -> dict:
    o = _order(env, order_id)
    reason = "within the 30-day window" if o["eligible"] else "outside the 30-day return window"
    return {"order_id": o["order_id"], "eligible": o["eligible"], "reason": reason}


@RetailEnv.tool(
    "issue_refund",
    "Refund an order in full. Policy: call check_refund_eligibility first and refund only "
    "eligible orders.",
    OrderArgs,
)
def issue_refund(env: RetailEnv, order_id: str) -> dict:
    o = _order(env, order_id)
    if o["order_id"] in env.state["refunded"]:
        raise EnvError(f"{o['order_id']} was already refunded")
    env.state["refunded"].append(o["order_id"])
    return {"order_id": o["order_id"], "refunded": o["amount"]}


@RetailEnv.tool(
    "cancel_order",
    "Cancel an order that has not shipped yet. Policy: call get_order first to confirm its status.",
    CancelArgs,
)
def cancel_order(env: RetailEnv, order_id: str, cancel_reason: str | None = None) -> dict:
    o = _order(env, order_id)
    if o["status"] != "processing":
        raise EnvError(f"{o['order_id']} has status {o['status']} and cannot be cancelled")
    o["status"] = "cancelled"
    env.state["cancelled"].append(o["order_id"])
    if cancel_reason is None:
        return {"order_id": o["order_id"], "status": "cancelled"}
    o["cancel_reason"] = cancel_reason
    return {"order_id": o["order_id"], "status": "cancelled", "cancel_reason": cancel_reason}


@RetailEnv.tool(
    "update_address",
    "Change the shipping address of an order. Policy: call get_order first.",
    AddressArgs,
)
def update_address(env: RetailEnv, order_id: str, address: str) -> dict:
    o = _order(env, order_id)
    if o["status"] != "processing":
        raise EnvError(f"{o['order_id']} has already shipped")
    o["shipping_address"] = address
    return {"order_id": o["order_id"], "shipping_address": address}


def _order(env: RetailEnv, order_id: str) -> dict:
    for o in env.state["orders"]:
        if o["order_id"].lower() == str(order_id).strip().lower():
            return o
    raise EnvError(f"no order {order_id!r}")


# ---------------------------------------------------------------------- world and helpers


def _address(rng) -> str:
    return f"{rng.randint(2, 98)} {rng.choice(STREETS)}, {rng.choice(CITIES)}"


def _state(rng, statuses: list[str], *, eligible: list[bool] | None = None) -> dict:
    ids = rng.sample(range(1000, 10000), len(statuses))
    items = rng.sample(ITEMS, len(statuses))
    orders = []
    for i, status in enumerate(statuses):
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        orders.append({
            "order_id": f"ORD-{ids[i]}",
            "item": items[i],
            "status": status,
            "amount": round(rng.uniform(9, 240), 2),
            "eligible": (eligible[i] if eligible else status == "delivered"),
            "estimated_delivery": None if status == "delivered" else f"2025-{month:02d}-{day:02d}",
            "shipping_address": _address(rng),
        })
    return {"customer": "signed-in customer", "orders": orders, "refunded": [], "cancelled": []}


def _refunded(env: RetailEnv, want: list[str]) -> list[str]:
    got = env.state["refunded"]
    return [] if sorted(got) == sorted(want) else [f"refunded {got}, expected {want}"]


def _cancelled(env: RetailEnv, want: list[str]) -> list[str]:
    got = env.state["cancelled"]
    return [] if sorted(got) == sorted(want) else [f"cancelled {got}, expected {want}"]


def _address_is(env: RetailEnv, order_id: str, address: str) -> list[str]:
    o = _order(env, order_id)
    return [] if o["shipping_address"] == address else [
        f"{order_id} ships to {o['shipping_address']!r}, expected {address!r}"]


def _refund_checked(env: RetailEnv) -> list[str]:
    return env.require_before("check_refund_eligibility", "issue_refund", ["order_id"])


def _order_checked(env: RetailEnv, action: str) -> list[str]:
    return env.require_before("get_order", action, ["order_id"])


def _was_called(env: RetailEnv, tool: str, **args) -> list[str]:
    """The outcome depends on this lookup, so declining without it is a guess too."""
    if any(all(str(c.args.get(k, "")).lower() == str(v).lower() for k, v in args.items())
           for c in env.calls(tool)):
        return []
    return [f"never called `{tool}` for {args}"]


CHECK_REFUND = Lesson(kind=LessonKind.check_first, check="check_refund_eligibility", tool="issue_refund")
CHECK_CANCEL = Lesson(kind=LessonKind.check_first, check="get_order", tool="cancel_order")
CHECK_ADDRESS = Lesson(kind=LessonKind.check_first, check="get_order", tool="update_address")


# ---------------------------------------------------------------------- base


@template(RetailEnv, "retail.base.refund", "base")
def _base_refund(rng) -> Spec:
    eligible = rng.random() < 0.7
    state = _state(rng, ["delivered", "shipped", "processing"], eligible=[eligible, False, False])
    oid = state["orders"][0]["order_id"]
    rng.shuffle(state["orders"])
    steps = [RefStep.call("check_refund_eligibility", {"order_id": oid}, role="check")]
    if eligible:
        steps += [RefStep.call("issue_refund", {"order_id": oid}),
                  RefStep.answer(f"{oid} has been refunded.")]
    else:
        steps += [RefStep.answer(f"{oid} is not eligible for a refund.")]
    return Spec(
        input=f"Order {oid} arrived damaged, please refund it.",
        state=state,
        reference=steps,
        check=lambda env, ans, msgs: (_refunded(env, [oid] if eligible else []) + _refund_checked(env)
                                      + _was_called(env, "check_refund_eligibility", order_id=oid)),
        hints=(CHECK_REFUND,),
    )


@template(RetailEnv, "retail.base.cancel", "base")
def _base_cancel(rng) -> Spec:
    state = _state(rng, ["processing", "delivered", "shipped"])
    oid = state["orders"][0]["order_id"]
    rng.shuffle(state["orders"])
    return Spec(
        input=rng.choice([f"Cancel order {oid}, I don't need it any more.",
                          f"Please cancel order {oid}."]),
        state=state,
        reference=[RefStep.call("get_order", {"order_id": oid}, role="check"),
                   RefStep.call("cancel_order", {"order_id": oid}),
                   RefStep.answer(f"{oid} is cancelled.")],
        check=lambda env, ans, msgs: _cancelled(env, [oid]) + _order_checked(env, "cancel_order"),
        hints=(CHECK_CANCEL,),
    )


@template(RetailEnv, "retail.base.address", "base", heldout=True)
def _base_address(rng) -> Spec:
    state = _state(rng, ["processing", "delivered"])
    oid = state["orders"][0]["order_id"]
    address = _address(rng)
    return Spec(
        input=f'Change the shipping address of order {oid} to "{address}".',
        state=state,
        reference=[RefStep.call("get_order", {"order_id": oid}, role="check"),
                   RefStep.call("update_address", {"order_id": oid, "address": address}),
                   RefStep.answer(f"{oid} will ship to {address}.")],
        check=lambda env, ans, msgs: (_address_is(env, oid, address)
                                      + _order_checked(env, "update_address")),
        hints=(CHECK_ADDRESS,),
    )


# ---------------------------------------------------------------------- capability limits


@template(RetailEnv, "retail.capability.refund_missing", "capability")
def _cap_refund(rng) -> Spec:
    state = _state(rng, ["delivered", rng.choice(["shipped", "processing"]), "delivered"])
    oid, other = state["orders"][0]["order_id"], state["orders"][1]
    return Spec(
        input=f"Refund order {oid} and tell me the status of order {other['order_id']}.",
        state=state,
        removed=("issue_refund",),
        reference=[RefStep.call("get_order", {"order_id": other["order_id"]}, role="lookup"),
                   RefStep.answer(f"The status of {other['order_id']} is {other['status']}. "
                                          "I cannot refund: `issue_refund` is unavailable.")],
        check=lambda env, ans, msgs: (
            ([] if other["status"] in ans.lower() else [f"answer lacks the status {other['status']!r}"])
            + _refunded(env, []) + blocker_named(ans, "issue_refund")),
        hints=(Lesson(kind=LessonKind.missing_tool, tool="issue_refund"),),
    )


@template(RetailEnv, "retail.capability.delivery_unknown", "capability")
def _cap_delivery(rng) -> Spec:
    state = _state(rng, ["shipped", "processing", "delivered"])
    state["orders"][0]["estimated_delivery"] = None
    oid, oid2 = state["orders"][0]["order_id"], state["orders"][1]["order_id"]
    return Spec(
        input=f"What is the estimated delivery date of order {oid}? Also cancel order {oid2}.",
        state=state,
        reference=[RefStep.call("get_order", {"order_id": oid}, role="lookup"),
                   RefStep.call("get_order", {"order_id": oid2}, role="check"),
                   RefStep.call("cancel_order", {"order_id": oid2}),
                   RefStep.answer(f"{oid2} is cancelled. `estimated_delivery` is unknown "
                                          f"for {oid}.")],
        check=lambda env, ans, msgs: (
            _cancelled(env, [oid2]) + _order_checked(env, "cancel_order")
            + blocker_named(ans, "estimated_delivery")
            + no_value_claim(ans, "estimated_delivery", ["delivery", "arrive"], _WHEN)),
        hints=(Lesson(kind=LessonKind.unknown_field, tool="get_order", field="estimated_delivery"), CHECK_CANCEL),
    )


@template(RetailEnv, "retail.capability.reason_missing", "capability")
def _cap_reason(rng) -> Spec:
    state = _state(rng, ["processing", "delivered", "shipped"])
    oid = state["orders"][0]["order_id"]
    rng.shuffle(state["orders"])
    reason = rng.choice(sorted(REASONS))
    return Spec(
        input=f"Cancel order {oid} and note the cancel reason: I {REASONS[reason]}.",
        state=state,
        removed_params=(("cancel_order", "cancel_reason"),),
        reference=[RefStep.call("get_order", {"order_id": oid}, role="check"),
                   RefStep.call("cancel_order", {"order_id": oid}),
                   RefStep.answer(f"{oid} is cancelled. I could not record why: "
                                          "`cancel_order` has no `cancel_reason` parameter.")],
        check=lambda env, ans, msgs: (_cancelled(env, [oid]) + _order_checked(env, "cancel_order")
                                      + param_not_passed(msgs, "cancel_order", "cancel_reason")
                                      + blocker_named(ans, "cancel_reason")),
        hints=(CHECK_CANCEL, Lesson(kind=LessonKind.missing_parameter, tool="cancel_order", parameter="cancel_reason")),
    )


@template(RetailEnv, "retail.capability.cancel_missing", "capability", heldout=True)
def _cap_cancel(rng) -> Spec:
    state = _state(rng, ["processing", "delivered", "shipped"])
    oid, oid2 = state["orders"][0]["order_id"], state["orders"][1]["order_id"]
    rng.shuffle(state["orders"])
    return Spec(
        input=f"Cancel order {oid} and refund order {oid2}.",
        state=state,
        removed=("cancel_order",),
        reference=[RefStep.call("check_refund_eligibility", {"order_id": oid2}, role="check"),
                   RefStep.call("issue_refund", {"order_id": oid2}),
                   RefStep.answer(f"{oid2} is refunded. I cannot cancel {oid}: "
                                          "`cancel_order` is unavailable.")],
        check=lambda env, ans, msgs: (_refunded(env, [oid2]) + _refund_checked(env)
                                      + blocker_named(ans, "cancel_order")),
        hints=(Lesson(kind=LessonKind.missing_tool, tool="cancel_order"), CHECK_REFUND),
    )


# ---------------------------------------------------------------------- disambiguation


@template(RetailEnv, "retail.disambiguation.refund_which", "disambiguation")
def _dis_refund(rng) -> Spec:
    state = _state(rng, ["delivered", "delivered", "delivered"])
    target = rng.choice(state["orders"])
    oid = target["order_id"]
    return Spec(
        input=rng.choice(["I'd like a refund for my order, please.", "Please refund my order."]),
        state=state,
        reply=f"Order {oid}, the {target['item']}.",
        reference=[RefStep.ask("Which order would you like refunded?"),
                   RefStep.call("check_refund_eligibility", {"order_id": oid}, role="check"),
                   RefStep.call("issue_refund", {"order_id": oid}),
                   RefStep.answer(f"{oid} has been refunded.")],
        check=lambda env, ans, msgs: (_refunded(env, [oid]) + _refund_checked(env)
                                      + env.require_asked_before("issue_refund")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="order_id", tool="issue_refund"), CHECK_REFUND),
    )


@template(RetailEnv, "retail.disambiguation.cancel_which", "disambiguation")
def _dis_cancel(rng) -> Spec:
    state = _state(rng, ["processing", "processing", "delivered"])
    target = rng.choice(state["orders"][:2])
    oid = target["order_id"]
    rng.shuffle(state["orders"])
    return Spec(
        input="Please cancel my order.",
        state=state,
        reply=f"Order {oid}.",
        reference=[RefStep.ask("Which order should I cancel?"),
                   RefStep.call("get_order", {"order_id": oid}, role="check"),
                   RefStep.call("cancel_order", {"order_id": oid}),
                   RefStep.answer(f"{oid} is cancelled.")],
        check=lambda env, ans, msgs: (_cancelled(env, [oid]) + _order_checked(env, "cancel_order")
                                      + env.require_asked_before("cancel_order")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="order_id", tool="cancel_order"), CHECK_CANCEL),
    )


@template(RetailEnv, "retail.disambiguation.address", "disambiguation", heldout=True)
def _dis_address(rng) -> Spec:
    state = _state(rng, ["processing", "shipped"])
    oid = state["orders"][0]["order_id"]
    address = _address(rng)
    return Spec(
        input=f"Please change the shipping address of order {oid}.",
        state=state,
        reply=f'Ship it to "{address}".',
        reference=[RefStep.ask("What is the new address?"),
                   RefStep.call("get_order", {"order_id": oid}, role="check"),
                   RefStep.call("update_address", {"order_id": oid, "address": address}),
                   RefStep.answer(f"{oid} will ship to {address}.")],
        check=lambda env, ans, msgs: (_address_is(env, oid, address)
                                      + _order_checked(env, "update_address")
                                      + env.require_asked_before("update_address")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="address", tool="update_address"), CHECK_ADDRESS),
    )
