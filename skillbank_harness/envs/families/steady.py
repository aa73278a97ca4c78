"""A consistency tier for small real models: requests a model *sometimes* gets right.

The ``small`` tier turned out all-or-nothing on the 1.5B model (16 of 24 templates 0/6 unguided,
4 of 24 6/6). A consistency product gains where a model sometimes succeeds: there its own
successful runs are the teacher and no oracle is needed. These templates are everyday requests
of two or three steps (look an id up before acting, put a date or an amount in the tool's form,
say the value in the user's unit, call the check a policy names, answer small talk without a
tool), each a lesson a skill bank is for.

Three tiers, fixed by ``benchmarks/protocols/protocol.json`` before any run:

* **evolution** (``split`` train): sixteen templates in four toolsets (library, trains, money,
  clinic); calibrated on the unguided model, the ones with consistency headroom are the
  evolution set;
* **unseen instances** (``…_again``, held out): the same sixteen requests worded otherwise and
  over other entities (other books, cities, accounts, doctors): the requests an agent sees again;
* **unseen templates** (held out): eight templates of the same lesson kinds in two other
  toolsets (cinema, parcels), never calibrated and never seen by a bank.

``KINDS`` names each template's lesson kind; ``AGAIN`` pairs an evolution template with its
unseen-instances twin. Verifiers are strict as a real system would be: a refused call counts
against a run (the ``small`` tier's rule), and a check must precede its action.

Written, and committed, before any run of any model on them; never reworded after.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Callable

from pydantic import BaseModel, Field

from skillbank_harness.envs.base import EnvError, Environment, RefStep, Spec, template
from skillbank_harness.envs.families.small import _mentions, _no_tools, _refused

__all__ = ["SteadyEnv", "KINDS", "AGAIN", "EVOLUTION", "UNSEEN_TEMPLATES"]

TODAY = dt.date(2027, 3, 8)  # a Monday, as in the small tier
_TODAY_LINE = "Today is Monday, 8 March 2027."
TOMORROW = TODAY + dt.timedelta(days=1)
FRIDAY = dt.date(2027, 3, 12)

KINDS: dict[str, str] = {}
AGAIN: dict[str, str] = {}


class SteadyEnv(Environment):
    """The common base of the consistency tier's worlds (each subclass is one toolset)."""

    family = "steady"


def _twin(env_cls: type[Environment], name: str, kind: str,
          build: Callable[[object, bool], Spec]) -> None:
    """Register ``steady.<name>`` (evolution) and ``steady.<name>_again`` (unseen instances):
    ``build(rng, again)`` picks its wording and entities from the pool ``again`` names."""
    base = f"steady.{name}"
    template(env_cls, base, "base", budget_variant=False)(lambda rng: build(rng, False))
    template(env_cls, base + "_again", "base", heldout=True,
             budget_variant=False)(lambda rng: build(rng, True))
    KINDS[base] = KINDS[base + "_again"] = kind
    AGAIN[base] = base + "_again"


def _unseen(env_cls: type[Environment], name: str, kind: str) -> Callable:
    tid = f"steady.{name}"
    KINDS[tid] = kind
    return template(env_cls, tid, "base", heldout=True, budget_variant=False)


def _pick(rng, again: bool, first: tuple, second: tuple):
    return rng.choice(second if again else first)


def _euros(answer: str, cents: int, what: str) -> list[str]:
    """The answer gives ``cents`` in euros (3.50, 3,50, €3.5), not in cents."""
    whole, frac = divmod(int(cents), 100)
    forms = [f"{whole}[.,]{frac:02d}"]
    if frac % 10 == 0:
        forms.append(f"{whole}[.,]{frac // 10}(?!\\d)")
    if frac == 0:
        forms.append(f"{whole}(?![.,]?\\d)\\s*(?:€|eur)|€\\s*{whole}(?![.,]?\\d)")
    pattern = "|".join(f"(?<![\\d.,])(?:{f})" for f in forms)
    return [] if re.search(pattern, answer or "", re.IGNORECASE) else [
        f"the answer does not give {what} in euros ({whole}.{frac:02d})"]


def _called(env: Environment, tool: str, **args) -> list[str]:
    """``tool`` ran (and was not refused) with these arguments (strings compared loosely)."""
    def same(a, b) -> bool:
        return str(a).strip().lower() == str(b).strip().lower()

    if any(all(same(c.args.get(k), v) for k, v in args.items()) for c in env.calls(tool)):
        return []
    return [f"never called `{tool}` with {args}"]


def _before(env: Environment, check: str, action: str) -> list[str]:
    checks = [c.seq for c in env.calls(check)]
    attempts = [c.seq for c in env.calls(action, ok_only=False)]
    if attempts and (not checks or min(checks) > min(attempts)):
        return [f"`{action}` was tried before `{check}`"]
    return []


def _iso(day: dt.date) -> str:
    return day.isoformat()


def _date_arg(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise EnvError(f"date must be YYYY-MM-DD, got {value!r}") from None


# ============================================================================ library

TITLES = ("The Silent River", "Winter Orchard", "A Map of Salt", "The Glass Harbour",
          "Northern Lights", "The Clockmaker's Daughter")
TITLES_AGAIN = ("Paper Moons", "The Last Lighthouse", "Copper and Ash", "The Quiet Valley",
                "Songs of the Delta", "The Iron Garden")
AUTHORS = ("Maria Keller", "Tomas Lindqvist", "Aiko Tanaka", "Peter Novak")
AUTHORS_AGAIN = ("Lucia Romano", "Henrik Dahl", "Nadia Petrova", "Samuel Okafor")


class Library(SteadyEnv):
    system_prompt = ("You are a library assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class QueryArgs(BaseModel):
    query: str = Field(description="Words of a title or an author's name.")


class BookArgs(BaseModel):
    book_id: str = Field(description="The book's id, e.g. B-1042 (from get_loans or search_books).")


class NoArgs(BaseModel):
    """No arguments."""


class PayArgs(BaseModel):
    amount_cents: int = Field(description="The amount to pay, in cents.")


def _book(env: Environment, book_id: str) -> dict:
    for book in env.state["books"]:
        if book["book_id"].lower() == str(book_id).strip().lower():
            return book
    raise EnvError(f"unknown book_id {book_id!r}")


@Library.tool("search_books", "Search the catalogue by title or author: book_id, title, author "
              "and whether it is available.", QueryArgs)
def search_books(env: Library, query: str) -> dict:
    q = query.strip().lower()
    return {"results": [{k: b[k] for k in ("book_id", "title", "author", "available")}
                        for b in env.state["books"]
                        if q and (q in b["title"].lower() or q in b["author"].lower())]}


@Library.tool("get_loans", "The books the user has on loan: book_id, title and due date.", NoArgs)
def get_loans(env: Library) -> dict:
    return {"loans": [{"book_id": b["book_id"], "title": b["title"], "due": b["due"]}
                      for b in env.state["books"] if b.get("due")]}


@Library.tool("renew_loan", "Renew a loan for 14 days.", BookArgs)
def renew_loan(env: Library, book_id: str) -> dict:
    book = _book(env, book_id)
    if not book.get("due"):
        raise EnvError(f"{book['book_id']} is not on loan")
    book["due"] = _iso(dt.date.fromisoformat(book["due"]) + dt.timedelta(days=14))
    return {"book_id": book["book_id"], "title": book["title"], "due": book["due"]}


@Library.tool("reserve_book", "Reserve an available book.", BookArgs)
def reserve_book(env: Library, book_id: str) -> dict:
    book = _book(env, book_id)
    if not book["available"]:
        raise EnvError(f"{book['book_id']} is not available")
    env.state.setdefault("reserved", []).append(book["book_id"])
    return {"book_id": book["book_id"], "title": book["title"], "reserved": True}


@Library.tool("get_account", "The user's account: fines owed (fines_cents).", NoArgs)
def get_account(env: Library) -> dict:
    env.state["account_seen"] = True
    return {"fines_cents": env.state["fines_cents"]}


@Library.tool("pay_fines", "Pay fines. Policy: call get_account first to see what is owed.",
              PayArgs)
def pay_fines(env: Library, amount_cents: int) -> dict:
    if not env.state.get("account_seen"):
        raise EnvError("refused by policy: call get_account first")
    if int(amount_cents) != env.state["fines_cents"]:
        raise EnvError(f"amount_cents must be what is owed ({env.state['fines_cents']})")
    env.state["paid"] = int(amount_cents)
    env.state["fines_cents"] = 0
    return {"paid_cents": int(amount_cents), "fines_cents": 0}


def _library_state(rng, again: bool, on_loan: int = 3, by_author: str | None = None) -> dict:
    titles = rng.sample(TITLES_AGAIN if again else TITLES, 5)
    authors = AUTHORS_AGAIN if again else AUTHORS
    books = []
    for i, title in enumerate(titles):
        books.append({"book_id": f"B-{rng.randint(1000, 9999)}", "title": title,
                      "author": rng.choice([a for a in authors if a != by_author]),
                      "available": True,
                      "due": _iso(TODAY + dt.timedelta(days=rng.randint(1, 9))) if i < on_loan
                      else None})
    if by_author:  # two books of the author, the first out, the second on the shelf
        books[3]["author"] = books[4]["author"] = by_author
        books[3]["available"] = False
    return {"books": books, "fines_cents": rng.choice([150, 275, 320, 405, 560, 730])}


def _renew(rng, again: bool) -> Spec:
    state = _library_state(rng, again)
    book = rng.choice(state["books"][:3])
    title = book["title"]
    new_due = _iso(dt.date.fromisoformat(book["due"]) + dt.timedelta(days=14))
    wording = _pick(rng, again, (f"Please renew my loan of {title}.",
                                 f"Can you extend {title} for me?"),
                    (f"I need more time with {title}, could you renew it?",
                     f"Renew the book {title} that I borrowed, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_loans", role="lookup"),
                   RefStep.call("renew_loan", {"book_id": book["book_id"]}),
                   RefStep.answer(f"Renewed: {title} is now due on {new_due}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "renew_loan", book_id=book["book_id"])
                                      + _mentions(ans, new_due[-2:].lstrip("0"), "the new due day")),
    )


def _reserve_author(rng, again: bool) -> Spec:
    author = rng.choice(AUTHORS_AGAIN if again else AUTHORS)
    state = _library_state(rng, again, by_author=author)
    shelf = state["books"][4]
    wording = _pick(rng, again, (f"Reserve a book by {author} for me, any one that is available.",
                                 f"I'd like to reserve something by {author}."),
                    (f"Could you put a hold on a book by {author}? Whichever is in.",
                     f"Get me a reservation for any available {author} book."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("search_books", {"query": author}, role="lookup"),
                   RefStep.call("reserve_book", {"book_id": shelf["book_id"]}),
                   RefStep.answer(f"I reserved {shelf['title']} by {author}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "reserve_book", book_id=shelf["book_id"])
                                      + _mentions(ans, shelf["title"], "the reserved title")),
    )


def _fines_euros(rng, again: bool) -> Spec:
    state = _library_state(rng, again)
    cents = state["fines_cents"]
    wording = _pick(rng, again, ("How much do I owe in library fines?",
                                 "What are my outstanding fines?"),
                    ("Do I have any fines to pay, and how much?",
                     "Tell me the total of my library fines, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_account", role="lookup"),
                   RefStep.answer(f"You owe {cents // 100}.{cents % 100:02d} euros.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "get_account")
                                      + _euros(ans, cents, "the fines")),
    )


def _pay_fines(rng, again: bool) -> Spec:
    state = _library_state(rng, again)
    cents = state["fines_cents"]
    wording = _pick(rng, again, ("Please pay my library fines.", "Settle my fines, please."),
                    ("I want to clear what I owe the library.",
                     "Pay off the fines on my account."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_account", role="check"),
                   RefStep.call("pay_fines", {"amount_cents": cents}),
                   RefStep.answer(f"Paid {cents // 100}.{cents % 100:02d} euros; you owe nothing now.")],
        check=lambda env, ans, msgs: (_before(env, "get_account", "pay_fines") + _refused(env)
                                      + _called(env, "pay_fines", amount_cents=cents)),
    )


_twin(Library, "library.renew", "procedure", _renew)
_twin(Library, "library.reserve_author", "procedure", _reserve_author)
_twin(Library, "library.fines_euros", "answer shape", _fines_euros)
_twin(Library, "library.pay_fines", "check first", _pay_fines)


# ============================================================================ trains

STATIONS = ("Hamburg", "Berlin", "Munich", "Cologne", "Frankfurt", "Leipzig")
STATIONS_AGAIN = ("Zurich", "Basel", "Bern", "Geneva", "Lausanne", "Lucerne")


class Trains(SteadyEnv):
    system_prompt = ("You are a rail booking assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class RouteArgs(BaseModel):
    origin: str = Field(description="Departure station, e.g. Berlin.")
    destination: str = Field(description="Arrival station.")
    date: str = Field(description="Travel date, YYYY-MM-DD.")


class TicketArgs(BaseModel):
    train_id: str = Field(description="The train's id from find_trains, e.g. IC 204.")
    passengers: int = Field(description="Number of passengers.")


@Trains.tool("find_trains", "Trains between two stations on a date: train_id, departs, arrives "
             "and price_eur.", RouteArgs)
def find_trains(env: Trains, origin: str, destination: str, date: str) -> dict:
    day = _date_arg(date)
    route = env.state["route"]
    if (origin.strip().lower(), destination.strip().lower()) != (route[0].lower(), route[1].lower()):
        return {"trains": []}
    if day < TODAY:
        raise EnvError("the date is in the past")
    return {"trains": env.state["trains"].get(_iso(day), [])}


@Trains.tool("book_ticket", "Book seats on a train.", TicketArgs)
def book_ticket(env: Trains, train_id: str, passengers: int) -> dict:
    known = {t["train_id"].lower(): t for day in env.state["trains"].values() for t in day}
    if str(train_id).strip().lower() not in known:
        raise EnvError(f"unknown train_id {train_id!r}")
    if not 1 <= int(passengers) <= 9:
        raise EnvError("passengers must be between 1 and 9")
    ref = f"BK-{env.state['ref']}"
    env.state.setdefault("bookings", []).append({"train_id": known[train_id.strip().lower()]["train_id"],
                                                 "passengers": int(passengers), "ref": ref})
    return {"booking": ref, "train_id": known[train_id.strip().lower()]["train_id"],
            "passengers": int(passengers)}


def _trains_state(rng, again: bool) -> dict:
    a, b = rng.sample(STATIONS_AGAIN if again else STATIONS, 2)
    days = {}
    for day in (TODAY + dt.timedelta(days=d) for d in range(0, 6)):
        times = sorted(rng.sample(range(5 * 60, 22 * 60, 5), 3))
        prices = rng.sample(range(19, 120), 3)
        days[_iso(day)] = [{"train_id": f"{rng.choice(['IC', 'ICE', 'RE'])} {rng.randint(100, 999)}",
                            "departs": f"{t // 60:02d}:{t % 60:02d}",
                            "arrives": f"{(t + 150) // 60 % 24:02d}:{(t + 150) % 60:02d}",
                            "price_eur": p} for t, p in zip(times, prices)]
    return {"route": [a, b], "trains": days, "ref": rng.randint(10000, 99999)}


def _first_tomorrow(rng, again: bool) -> Spec:
    state = _trains_state(rng, again)
    a, b = state["route"]
    first = state["trains"][_iso(TOMORROW)][0]
    wording = _pick(rng, again, (f"When does the first train from {a} to {b} leave tomorrow?",
                                 f"What's the earliest train from {a} to {b} tomorrow?"),
                    (f"I'm going from {a} to {b} tomorrow; when is the first departure?",
                     f"Tomorrow, {a} to {b}: what time does the earliest train go?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_trains", {"origin": a, "destination": b, "date": _iso(TOMORROW)},
                                role="lookup"),
                   RefStep.answer(f"The first train, {first['train_id']}, leaves at {first['departs']}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "find_trains", date=_iso(TOMORROW))
                                      + _mentions(ans, first["departs"], "the first departure")),
    )


def _cheapest(rng, again: bool) -> Spec:
    state = _trains_state(rng, again)
    a, b = state["route"]
    trains = state["trains"][_iso(FRIDAY)]
    cheap = min(trains, key=lambda t: t["price_eur"])
    wording = _pick(rng, again, (f"What's the cheapest train from {a} to {b} on Friday 12 March?",
                                 f"Find me the lowest fare from {a} to {b} on 12 March."),
                    (f"On Friday the 12th I travel {a} to {b}. Which train costs least?",
                     f"Cheapest way by train from {a} to {b} this Friday, 12 March?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_trains", {"origin": a, "destination": b, "date": _iso(FRIDAY)},
                                role="lookup"),
                   RefStep.answer(f"The cheapest is {cheap['train_id']} at {cheap['departs']}, "
                                  f"{cheap['price_eur']} euros.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "find_trains", date=_iso(FRIDAY))
                                      + _mentions(ans, cheap["price_eur"], "the cheapest fare")),
    )


def _book_earliest(rng, again: bool) -> Spec:
    state = _trains_state(rng, again)
    a, b = state["route"]
    first = state["trains"][_iso(FRIDAY)][0]
    n = rng.randint(2, 4)
    wording = _pick(rng, again, (f"Book {n} seats on the earliest train from {a} to {b} on 12 March.",
                                 f"We are {n} people: get us on the first train {a} to {b} on 12 March."),
                    (f"Please reserve {n} places on the first {a}-{b} train this Friday, 12 March.",
                     f"I need tickets for {n} on Friday 12 March, {a} to {b}, the earliest train."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_trains", {"origin": a, "destination": b, "date": _iso(FRIDAY)},
                                role="lookup"),
                   RefStep.call("book_ticket", {"train_id": first["train_id"], "passengers": n}),
                   RefStep.answer(f"Booked {n} seats on {first['train_id']} at {first['departs']} "
                                  f"(booking BK-{state['ref']}).")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "book_ticket", train_id=first["train_id"],
                                                              passengers=n)
                                      + _mentions(ans, f"BK-{state['ref']}", "the booking reference")),
    )


def _trains_thanks(rng, again: bool) -> Spec:
    wording = _pick(rng, again, ("Thanks a lot, that's everything!", "Cheers, you've been helpful."),
                    ("Brilliant, many thanks for sorting that out.", "Okay, thank you, bye!"))
    return Spec(input=wording, state=_trains_state(rng, again),
                reference=[RefStep.answer("You're welcome, have a good trip!")],
                check=lambda env, ans, msgs: _no_tools(msgs))


_twin(Trains, "trains.first_tomorrow", "argument shape", _first_tomorrow)
_twin(Trains, "trains.cheapest", "answer shape", _cheapest)
_twin(Trains, "trains.book_earliest", "procedure", _book_earliest)
_twin(Trains, "trains.thanks", "no tool", _trains_thanks)


# ============================================================================ money

ACCOUNTS = ("savings", "current", "holiday", "house")
ACCOUNTS_AGAIN = ("travel", "emergency", "car", "wedding")


class Money(SteadyEnv):
    system_prompt = ("You are a banking assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class TransferArgs(BaseModel):
    from_account: str = Field(description="Account id to take the money from, e.g. AC-310.")
    to_account: str = Field(description="Account id to put the money in.")
    amount_cents: int = Field(description="Amount in cents.")


@Money.tool("get_accounts", "The user's accounts: account_id, name and balance_cents.", NoArgs)
def get_accounts(env: Money) -> dict:
    return {"accounts": env.state["accounts"]}


@Money.tool("get_transfer_limit", "Today's remaining transfer limit (limit_cents).", NoArgs)
def get_transfer_limit(env: Money) -> dict:
    env.state["limit_seen"] = True
    return {"limit_cents": env.state["limit_cents"]}


@Money.tool("transfer", "Move money between two of the user's accounts. Policy: call "
            "get_transfer_limit first.", TransferArgs)
def transfer(env: Money, from_account: str, to_account: str, amount_cents: int) -> dict:
    if not env.state.get("limit_seen"):
        raise EnvError("refused by policy: call get_transfer_limit first")
    ids = {a["account_id"].lower(): a for a in env.state["accounts"]}
    for value in (from_account, to_account):
        if str(value).strip().lower() not in ids:
            raise EnvError(f"unknown account {value!r}: use an account_id from get_accounts")
    src, dst = ids[from_account.strip().lower()], ids[to_account.strip().lower()]
    if int(amount_cents) <= 0 or int(amount_cents) > src["balance_cents"]:
        raise EnvError("amount_cents must be positive and within the balance")
    src["balance_cents"] -= int(amount_cents)
    dst["balance_cents"] += int(amount_cents)
    env.state.setdefault("transfers", []).append((src["account_id"], dst["account_id"], int(amount_cents)))
    return {"ok": True, "from": src["account_id"], "to": dst["account_id"], "amount_cents": int(amount_cents)}


def _money_state(rng, again: bool) -> dict:
    names = ACCOUNTS_AGAIN if again else ACCOUNTS
    ids = rng.sample(range(100, 999), len(names))
    return {"accounts": [{"account_id": f"AC-{i}", "name": n,
                          "balance_cents": rng.randint(200, 4000) * 100 + rng.choice([0, 25, 50, 75, 90])}
                         for i, n in zip(ids, names)],
            "limit_cents": 500000}


def _named(state: dict, name: str) -> dict:
    return next(a for a in state["accounts"] if a["name"] == name)


def _balance_euros(rng, again: bool) -> Spec:
    state = _money_state(rng, again)
    name = rng.choice(ACCOUNTS_AGAIN if again else ACCOUNTS)
    cents = _named(state, name)["balance_cents"]
    wording = _pick(rng, again, (f"How much is in my {name} account?",
                                 f"What's the balance of my {name} account?"),
                    (f"Tell me what my {name} account holds right now.",
                     f"Could you check how much money is in the {name} account?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_accounts", role="lookup"),
                   RefStep.answer(f"Your {name} account holds {cents // 100}.{cents % 100:02d} euros.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, cents, "the balance"),
    )


def _total(rng, again: bool) -> Spec:
    state = _money_state(rng, again)
    x, y = rng.sample(ACCOUNTS_AGAIN if again else ACCOUNTS, 2)
    cents = _named(state, x)["balance_cents"] + _named(state, y)["balance_cents"]
    wording = _pick(rng, again, (f"How much do I have in my {x} and {y} accounts together?",
                                 f"What is the combined balance of {x} and {y}?"),
                    (f"Add up my {x} and {y} accounts for me.",
                     f"If I pooled the {x} and the {y} account, how much would that be?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_accounts", role="lookup"),
                   RefStep.answer(f"Together: {cents // 100}.{cents % 100:02d} euros.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, cents, "the total"),
    )


def _transfer(rng, again: bool) -> Spec:
    state = _money_state(rng, again)
    x, y = rng.sample(ACCOUNTS_AGAIN if again else ACCOUNTS, 2)
    euros = rng.choice([50, 120, 75, 200, 30])
    src, dst = _named(state, x), _named(state, y)
    wording = _pick(rng, again, (f"Move {euros} euros from my {x} account to my {y} account.",
                                 f"Transfer {euros} EUR from {x} to {y}, please."),
                    (f"Put {euros} euros into {y}, taking it from {x}.",
                     f"Shift €{euros} over from the {x} account into the {y} one."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_accounts", role="lookup"),
                   RefStep.call("get_transfer_limit", role="check"),
                   RefStep.call("transfer", {"from_account": src["account_id"], "to_account": dst["account_id"],
                                             "amount_cents": euros * 100}),
                   RefStep.answer(f"Moved {euros} euros from {x} to {y}.")],
        check=lambda env, ans, msgs: (_before(env, "get_transfer_limit", "transfer") + _refused(env)
                                      + _called(env, "transfer", from_account=src["account_id"],
                                                to_account=dst["account_id"], amount_cents=euros * 100)),
    )


def _money_greeting(rng, again: bool) -> Spec:
    wording = _pick(rng, again, ("Hi there! How are you today?", "Good morning, hope you're well!"),
                    ("Hello! Nice to talk to you again.", "Hey, how's your day going?"))
    return Spec(input=wording, state=_money_state(rng, again),
                reference=[RefStep.answer("Hello! I'm well, thanks. How can I help?")],
                check=lambda env, ans, msgs: _no_tools(msgs))


_twin(Money, "money.balance_euros", "answer shape", _balance_euros)
_twin(Money, "money.total", "procedure", _total)
_twin(Money, "money.transfer", "check first", _transfer)
_twin(Money, "money.greeting", "no tool", _money_greeting)


# ============================================================================ clinic

SPECIALTIES = {"dentist": ("Dr. Weber", "Dr. Braun"), "dermatologist": ("Dr. Schulz", "Dr. Roth")}
SPECIALTIES_AGAIN = {"cardiologist": ("Dr. Meyer", "Dr. Fischer"),
                     "optician": ("Dr. Wolf", "Dr. Klein")}
PATIENTS = ("Anna", "Jonas", "Lea", "Paul")
PATIENTS_AGAIN = ("Mira", "Felix", "Sofia", "Emil")


class Clinic(SteadyEnv):
    system_prompt = ("You are a clinic's booking assistant. " + _TODAY_LINE + " Use the tools, "
                     "then answer in one or two short sentences.")


class SpecialtyArgs(BaseModel):
    specialty: str = Field(description="e.g. dentist.")


class SlotsArgs(BaseModel):
    doctor_id: str = Field(description="The doctor's id from list_doctors, e.g. D-12.")
    date: str = Field(description="Date, YYYY-MM-DD.")


class BookSlotArgs(BaseModel):
    slot_id: str = Field(description="A slot id from find_slots.")
    patient: str = Field(description="The patient's first name.")


class BookingArgs(BaseModel):
    booking_id: str = Field(description="The booking's id, e.g. AP-5521.")


@Clinic.tool("list_doctors", "Doctors of a specialty: doctor_id and name.", SpecialtyArgs)
def list_doctors(env: Clinic, specialty: str) -> dict:
    return {"doctors": [d for d in env.state["doctors"]
                        if d["specialty"].lower() == specialty.strip().lower().rstrip("s")]}


@Clinic.tool("find_slots", "Free slots of a doctor on a date: slot_id and time.", SlotsArgs)
def find_slots(env: Clinic, doctor_id: str, date: str) -> dict:
    day = _date_arg(date)
    doctor = next((d for d in env.state["doctors"] if d["doctor_id"].lower() == doctor_id.strip().lower()), None)
    if doctor is None:
        raise EnvError(f"unknown doctor_id {doctor_id!r}: use a doctor_id from list_doctors")
    return {"slots": doctor["slots"].get(_iso(day), [])}


@Clinic.tool("book_slot", "Book a slot for a patient.", BookSlotArgs)
def book_slot(env: Clinic, slot_id: str, patient: str) -> dict:
    for doctor in env.state["doctors"]:
        for day, slots in doctor["slots"].items():
            for slot in slots:
                if slot["slot_id"].lower() == str(slot_id).strip().lower():
                    env.state.setdefault("booked", []).append({"slot_id": slot["slot_id"],
                                                               "patient": patient})
                    return {"booked": slot["slot_id"], "date": day, "time": slot["time"],
                            "doctor": doctor["name"], "patient": patient}
    raise EnvError(f"unknown slot_id {slot_id!r}: use a slot_id from find_slots")


@Clinic.tool("get_booking", "A booking's details: date, time, doctor.", BookingArgs)
def get_booking(env: Clinic, booking_id: str) -> dict:
    booking = env.state["booking"]
    if booking["booking_id"].lower() != str(booking_id).strip().lower():
        raise EnvError(f"unknown booking_id {booking_id!r}")
    env.state["booking_seen"] = True
    return booking


@Clinic.tool("cancel_booking", "Cancel a booking. Policy: call get_booking first to confirm "
             "which appointment it is.", BookingArgs)
def cancel_booking(env: Clinic, booking_id: str) -> dict:
    if not env.state.get("booking_seen"):
        raise EnvError("refused by policy: call get_booking first")
    if env.state["booking"]["booking_id"].lower() != str(booking_id).strip().lower():
        raise EnvError(f"unknown booking_id {booking_id!r}")
    env.state["cancelled"] = True
    return {"cancelled": env.state["booking"]["booking_id"]}


def _clinic_state(rng, again: bool) -> dict:
    doctors = []
    for specialty, names in (SPECIALTIES_AGAIN if again else SPECIALTIES).items():
        for name in names:
            slots = {}
            for day in (TODAY + dt.timedelta(days=d) for d in range(1, 6)):
                times = sorted(rng.sample(range(8 * 60, 17 * 60, 15), 2))
                slots[_iso(day)] = [{"slot_id": f"S-{rng.randint(100, 999)}",
                                     "time": f"{t // 60:02d}:{t % 60:02d}"} for t in times]
            doctors.append({"doctor_id": f"D-{rng.randint(10, 99)}", "name": name,
                            "specialty": specialty, "slots": slots})
    return {"doctors": doctors}


def _next_friday(rng, again: bool) -> Spec:
    state = _clinic_state(rng, again)
    doctor = rng.choice(state["doctors"])
    first = doctor["slots"][_iso(FRIDAY)][0]
    wording = _pick(rng, again, (f"Is {doctor['name']} (id {doctor['doctor_id']}) free this Friday? "
                                 "When is the first slot?",
                                 f"What's the earliest time {doctor['name']}, {doctor['doctor_id']}, "
                                 "can see me on Friday?"),
                    (f"On Friday, when could {doctor['name']} ({doctor['doctor_id']}) first see me?",
                     f"First free time with {doctor['doctor_id']} ({doctor['name']}) this Friday?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_slots", {"doctor_id": doctor["doctor_id"], "date": _iso(FRIDAY)},
                                role="lookup"),
                   RefStep.answer(f"The first slot on Friday is at {first['time']}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "find_slots", date=_iso(FRIDAY))
                                      + _mentions(ans, first["time"], "the first slot")),
    )


def _book_tomorrow(rng, again: bool) -> Spec:
    state = _clinic_state(rng, again)
    specialty = rng.choice(list(SPECIALTIES_AGAIN if again else SPECIALTIES))
    doctor = next(d for d in state["doctors"] if d["specialty"] == specialty)
    patient = rng.choice(PATIENTS_AGAIN if again else PATIENTS)
    slot = doctor["slots"][_iso(TOMORROW)][0]
    wording = _pick(rng, again, (f"Book {patient} with {doctor['name']} ({doctor['doctor_id']}) "
                                 "tomorrow, the first free slot.",
                                 f"Please get {patient} the earliest appointment tomorrow with "
                                 f"{doctor['name']}, id {doctor['doctor_id']}."),
                    (f"{patient} needs to see {doctor['name']} ({doctor['doctor_id']}) tomorrow: "
                     "take the first slot.",
                     f"Earliest slot tomorrow with {doctor['doctor_id']} ({doctor['name']}) for "
                     f"{patient}, please book it."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_slots", {"doctor_id": doctor["doctor_id"], "date": _iso(TOMORROW)},
                                role="lookup"),
                   RefStep.call("book_slot", {"slot_id": slot["slot_id"], "patient": patient}),
                   RefStep.answer(f"Booked {patient} with {doctor['name']} tomorrow at {slot['time']}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "book_slot", slot_id=slot["slot_id"],
                                                              patient=patient)
                                      + _mentions(ans, slot["time"], "the appointment time")),
    )


def _specialty_earliest(rng, again: bool) -> Spec:
    state = _clinic_state(rng, again)
    specialty = rng.choice(list(SPECIALTIES_AGAIN if again else SPECIALTIES))
    doctors = [d for d in state["doctors"] if d["specialty"] == specialty]
    day = TODAY + dt.timedelta(days=2)  # Wednesday
    best = min((s["time"], d["name"]) for d in doctors for s in d["slots"][_iso(day)])
    wording = _pick(rng, again, (f"Which {specialty} can see me earliest on Wednesday 10 March?",
                                 f"I need a {specialty} on 10 March: who has the earliest slot?"),
                    (f"On Wednesday the 10th, which {specialty} is free first?",
                     f"Earliest {specialty} appointment on 10 March, and with whom?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("list_doctors", {"specialty": specialty}, role="lookup"),
                   *[RefStep.call("find_slots", {"doctor_id": d["doctor_id"], "date": _iso(day)},
                                  role="lookup") for d in doctors],
                   RefStep.answer(f"{best[1]} has the earliest slot, at {best[0]}.")],
        check=lambda env, ans, msgs: (_refused(env) + _mentions(ans, best[1], "the doctor")
                                      + _mentions(ans, best[0], "the time")),
    )


def _cancel(rng, again: bool) -> Spec:
    state = _clinic_state(rng, again)
    doctor = rng.choice(state["doctors"])
    booking_id = f"AP-{rng.randint(1000, 9999)}"
    state["booking"] = {"booking_id": booking_id, "doctor": doctor["name"],
                        "date": _iso(FRIDAY), "time": doctor["slots"][_iso(FRIDAY)][1]["time"]}
    wording = _pick(rng, again, (f"Please cancel my appointment {booking_id}.",
                                 f"Cancel booking {booking_id}, I can't make it."),
                    (f"I won't be able to come: drop appointment {booking_id}.",
                     f"Could you call off {booking_id} for me?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_booking", {"booking_id": booking_id}, role="check"),
                   RefStep.call("cancel_booking", {"booking_id": booking_id}),
                   RefStep.answer(f"Cancelled {booking_id} with {doctor['name']}.")],
        check=lambda env, ans, msgs: (_before(env, "get_booking", "cancel_booking") + _refused(env)
                                      + _called(env, "cancel_booking", booking_id=booking_id)),
    )


_twin(Clinic, "clinic.first_friday", "argument shape", _next_friday)
_twin(Clinic, "clinic.book_tomorrow", "procedure", _book_tomorrow)
_twin(Clinic, "clinic.specialty_earliest", "procedure", _specialty_earliest)
_twin(Clinic, "clinic.cancel", "check first", _cancel)


# ============================================================================ unseen: cinema

FILMS = ("Blue Horizon", "The Long Night", "Echoes", "Paper Tigers", "Moonrise Kingdom Road")


class Cinema(SteadyEnv):
    system_prompt = ("You are a cinema's ticket assistant. " + _TODAY_LINE + " Use the tools, "
                     "then answer in one or two short sentences.")


class FilmDateArgs(BaseModel):
    film: str = Field(description="The film's title.")
    date: str = Field(description="Date, YYYY-MM-DD.")


class SeatsArgs(BaseModel):
    showing_id: str = Field(description="A showing id from find_showings, e.g. SH-77.")
    seats: int = Field(description="Number of seats.")


@Cinema.tool("find_showings", "Showings of a film on a date: showing_id, time and price_cents.",
             FilmDateArgs)
def find_showings(env: Cinema, film: str, date: str) -> dict:
    day = _date_arg(date)
    if film.strip().lower() != env.state["film"].lower():
        return {"showings": []}
    return {"showings": env.state["showings"].get(_iso(day), [])}


@Cinema.tool("book_seats", "Book seats for a showing.", SeatsArgs)
def book_seats(env: Cinema, showing_id: str, seats: int) -> dict:
    for day, showings in env.state["showings"].items():
        for s in showings:
            if s["showing_id"].lower() == str(showing_id).strip().lower():
                env.state.setdefault("booked", []).append({"showing_id": s["showing_id"], "seats": int(seats)})
                return {"booked": s["showing_id"], "date": day, "time": s["time"], "seats": int(seats)}
    raise EnvError(f"unknown showing_id {showing_id!r}: use a showing_id from find_showings")


def _cinema_state(rng) -> dict:
    showings = {}
    for day in (TODAY + dt.timedelta(days=d) for d in range(0, 6)):
        times = sorted(rng.sample(range(14 * 60, 23 * 60, 15), 3))
        showings[_iso(day)] = [{"showing_id": f"SH-{rng.randint(10, 99)}{i}",
                                "time": f"{t // 60:02d}:{t % 60:02d}",
                                "price_cents": rng.choice([850, 1050, 1275, 990, 1120])}
                               for i, t in enumerate(times)]
    return {"film": rng.choice(FILMS), "showings": showings}


@_unseen(Cinema, "cinema.first_tomorrow", "argument shape")
def _cinema_tomorrow(rng) -> Spec:
    state = _cinema_state(rng)
    film = state["film"]
    first = state["showings"][_iso(TOMORROW)][0]
    return Spec(
        input=rng.choice([f"When is the first showing of {film} tomorrow?",
                          f"What time does {film} first play tomorrow?"]),
        state=state,
        reference=[RefStep.call("find_showings", {"film": film, "date": _iso(TOMORROW)}, role="lookup"),
                   RefStep.answer(f"The first showing tomorrow is at {first['time']}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "find_showings", date=_iso(TOMORROW))
                                      + _mentions(ans, first["time"], "the first showing")),
    )


@_unseen(Cinema, "cinema.book_film", "procedure")
def _cinema_book(rng) -> Spec:
    state = _cinema_state(rng)
    film = state["film"]
    last = state["showings"][_iso(FRIDAY)][-1]
    n = rng.randint(2, 5)
    return Spec(
        input=rng.choice([f"Book {n} seats for the last showing of {film} on Friday 12 March.",
                          f"We'd like {n} tickets for {film}, the late showing on 12 March."]),
        state=state,
        reference=[RefStep.call("find_showings", {"film": film, "date": _iso(FRIDAY)}, role="lookup"),
                   RefStep.call("book_seats", {"showing_id": last["showing_id"], "seats": n}),
                   RefStep.answer(f"Booked {n} seats for {film} at {last['time']} on Friday.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "book_seats", showing_id=last["showing_id"],
                                                              seats=n)
                                      + _mentions(ans, last["time"], "the showing's time")),
    )


@_unseen(Cinema, "cinema.price_euros", "answer shape")
def _cinema_price(rng) -> Spec:
    state = _cinema_state(rng)
    film = state["film"]
    first = state["showings"][_iso(FRIDAY)][0]
    return Spec(
        input=rng.choice([f"How much is a ticket for the first showing of {film} on 12 March?",
                          f"What does the earliest {film} showing on Friday 12 March cost?"]),
        state=state,
        reference=[RefStep.call("find_showings", {"film": film, "date": _iso(FRIDAY)}, role="lookup"),
                   RefStep.answer(f"A ticket costs {first['price_cents'] // 100}."
                                  f"{first['price_cents'] % 100:02d} euros.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, first["price_cents"], "the price"),
    )


@_unseen(Cinema, "cinema.thanks", "no tool")
def _cinema_thanks(rng) -> Spec:
    return Spec(input=rng.choice(["Lovely, thanks for the help!", "That's great, thank you!"]),
                state=_cinema_state(rng),
                reference=[RefStep.answer("You're welcome, enjoy the film!")],
                check=lambda env, ans, msgs: _no_tools(msgs))


# ============================================================================ unseen: parcels

SENDERS = ("Bookhaus", "GreenGrocer", "TechNest", "Atelier Blum", "SportWelt")
LOCKERS = ("Central Station", "Market Square", "Old Town", "Riverside")


class Parcels(SteadyEnv):
    system_prompt = ("You are a parcel delivery assistant. " + _TODAY_LINE + " Use the tools, "
                     "then answer in one or two short sentences.")


class ParcelArgs(BaseModel):
    parcel_id: str = Field(description="The parcel's id from list_parcels, e.g. PK-2231.")


class RedirectArgs(ParcelArgs):
    locker: str = Field(description="The locker's name.")


class LockerArgs(BaseModel):
    locker: str = Field(description="The locker's name.")


@Parcels.tool("list_parcels", "The user's incoming parcels: parcel_id and sender.", NoArgs)
def list_parcels(env: Parcels) -> dict:
    return {"parcels": [{"parcel_id": p["parcel_id"], "sender": p["sender"]} for p in env.state["parcels"]]}


def _parcel(env: Environment, parcel_id: str) -> dict:
    for p in env.state["parcels"]:
        if p["parcel_id"].lower() == str(parcel_id).strip().lower():
            return p
    raise EnvError(f"unknown parcel_id {parcel_id!r}: use a parcel_id from list_parcels")


@Parcels.tool("track_parcel", "A parcel's status, expected delivery date and weight_grams.",
              ParcelArgs)
def track_parcel(env: Parcels, parcel_id: str) -> dict:
    p = _parcel(env, parcel_id)
    return {k: p[k] for k in ("parcel_id", "status", "expected", "weight_grams")}


@Parcels.tool("check_locker", "Whether a parcel locker has space.", LockerArgs)
def check_locker(env: Parcels, locker: str) -> dict:
    env.state.setdefault("lockers_checked", []).append(locker.strip().lower())
    return {"locker": locker, "has_space": True}


@Parcels.tool("redirect_parcel", "Send a parcel to a locker instead. Policy: call check_locker "
              "for that locker first.", RedirectArgs)
def redirect_parcel(env: Parcels, parcel_id: str, locker: str) -> dict:
    if locker.strip().lower() not in env.state.get("lockers_checked", []):
        raise EnvError("refused by policy: call check_locker for that locker first")
    p = _parcel(env, parcel_id)
    p["locker"] = locker
    return {"parcel_id": p["parcel_id"], "locker": locker}


def _parcels_state(rng) -> dict:
    return {"parcels": [{"parcel_id": f"PK-{rng.randint(1000, 9999)}", "sender": s,
                         "status": rng.choice(["in transit", "at the depot", "out for delivery"]),
                         "expected": _iso(TODAY + dt.timedelta(days=rng.randint(1, 4))),
                         "weight_grams": rng.choice([450, 1250, 2300, 780, 3150])}
                        for s in rng.sample(SENDERS, 3)]}


@_unseen(Parcels, "parcels.track_sender", "procedure")
def _track_sender(rng) -> Spec:
    state = _parcels_state(rng)
    p = rng.choice(state["parcels"])
    return Spec(
        input=rng.choice([f"Where is my parcel from {p['sender']}?",
                          f"What's the status of the {p['sender']} delivery?"]),
        state=state,
        reference=[RefStep.call("list_parcels", role="lookup"),
                   RefStep.call("track_parcel", {"parcel_id": p["parcel_id"]}, role="lookup"),
                   RefStep.answer(f"Your {p['sender']} parcel is {p['status']}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "track_parcel", parcel_id=p["parcel_id"])
                                      + _mentions(ans, p["status"], "the status")),
    )


def _kilos(answer: str, kg: str) -> list[str]:
    number = re.escape(kg).replace(r"\.", "[.,]")
    pattern = rf"(?<![\d.,]){number}0*(?!\d)\s*(?:kg|kilo)"
    return [] if re.search(pattern, answer or "", re.IGNORECASE) else [
        f"the answer does not give the weight in kg ({kg})"]


@_unseen(Parcels, "parcels.weight_kg", "answer shape")
def _weight_kg(rng) -> Spec:
    state = _parcels_state(rng)
    p = rng.choice(state["parcels"])
    kg = f"{p['weight_grams'] / 1000:g}"
    return Spec(
        input=rng.choice([f"How many kilos does parcel {p['parcel_id']} weigh?",
                          f"What's the weight of {p['parcel_id']} in kg?"]),
        state=state,
        reference=[RefStep.call("track_parcel", {"parcel_id": p["parcel_id"]}, role="lookup"),
                   RefStep.answer(f"It weighs {kg} kg.")],
        check=lambda env, ans, msgs: _refused(env) + _kilos(ans, kg),
    )


@_unseen(Parcels, "parcels.redirect", "check first")
def _redirect(rng) -> Spec:
    state = _parcels_state(rng)
    p = rng.choice(state["parcels"])
    locker = rng.choice(LOCKERS)
    return Spec(
        input=rng.choice([f"Please send parcel {p['parcel_id']} to the {locker} locker instead.",
                          f"Redirect {p['parcel_id']} to the locker at {locker}."]),
        state=state,
        reference=[RefStep.call("check_locker", {"locker": locker}, role="check"),
                   RefStep.call("redirect_parcel", {"parcel_id": p["parcel_id"], "locker": locker}),
                   RefStep.answer(f"{p['parcel_id']} will go to the {locker} locker.")],
        check=lambda env, ans, msgs: (_before(env, "check_locker", "redirect_parcel") + _refused(env)
                                      + _called(env, "redirect_parcel", parcel_id=p["parcel_id"])),
    )


@_unseen(Parcels, "parcels.greeting", "no tool")
def _parcels_greeting(rng) -> Spec:
    return Spec(input=rng.choice(["Hello, hope your day is going well!", "Hi! Nice to meet you."]),
                state=_parcels_state(rng),
                reference=[RefStep.answer("Hello! How can I help with your parcels?")],
                check=lambda env, ans, msgs: _no_tools(msgs))


EVOLUTION = tuple(AGAIN)
UNSEEN_TEMPLATES = tuple(t for t in KINDS if t not in AGAIN and t not in AGAIN.values())
