"""Word pools and small random-value helpers for synthetic documents (names, places, dates, amounts).

Everything takes a :class:`numpy.random.Generator`, so one seed reproduces every value.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

FIRST_NAMES = (
    "James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan "
    "Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa Anthony Betty Mark Margaret Donald "
    "Sandra Steven Ashley Paul Kimberly Andrew Emily Joshua Donna Kenneth Michelle Kevin Carol Brian Amanda "
    "George Melissa Edward Deborah Ronald Stephanie Timothy Rebecca Jason Laura Jeffrey Helen Ryan Sharon "
    "Jacob Cynthia Gary Kathleen Nicholas Amy Eric Shirley Jonathan Angela Larry Anna Justin Ruth Scott "
    "Brenda Frank Pamela Raymond Nicole Gregory Katherine Samuel Virginia Benjamin Catherine Patrick Olivia "
    "Priya Ahmed Mei Carlos Sofia Hiroshi Fatima Lucas Ingrid Mateo Aisha Tomasz Elena Kwame Noor Rafael"
).split()

LAST_NAMES = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez "
    "Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark "
    "Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams "
    "Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker "
    "Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper "
    "Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood Bennett "
    "Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Okafor "
    "Lindqvist Kowalski Tanaka Novak Haddad Fischer Rossi Dubois Moreau Schneider Svensson Brennan"
).split()

CITIES = (
    ("Springfield", "IL", "62701"),
    ("Portland", "OR", "97205"),
    ("Madison", "WI", "53703"),
    ("Columbus", "OH", "43215"),
    ("Austin", "TX", "78701"),
    ("Raleigh", "NC", "27601"),
    ("Boise", "ID", "83702"),
    ("Albany", "NY", "12207"),
    ("Tucson", "AZ", "85701"),
    ("Richmond", "VA", "23219"),
    ("Denver", "CO", "80202"),
    ("Omaha", "NE", "68102"),
    ("Hartford", "CT", "06103"),
    ("Savannah", "GA", "31401"),
    ("Spokane", "WA", "99201"),
    ("Lexington", "KY", "40507"),
    ("Fresno", "CA", "93721"),
    ("Dayton", "OH", "45402"),
    ("Tacoma", "WA", "98402"),
    ("Trenton", "NJ", "08608"),
    ("Lincoln", "NE", "68508"),
    ("Provo", "UT", "84601"),
    ("Salem", "OR", "97301"),
    ("Burlington", "VT", "05401"),
)

STREETS = (
    "Main Street",
    "Oak Avenue",
    "Maple Drive",
    "Cedar Lane",
    "Park Road",
    "Elm Street",
    "Washington Blvd",
    "Lake View Drive",
    "Hillcrest Road",
    "Pine Street",
    "River Road",
    "Sunset Avenue",
    "Church Street",
    "Market Street",
    "Highland Avenue",
    "Mill Road",
    "Franklin Street",
    "Union Avenue",
    "Harbor Way",
)

COMPANY_WORDS = (
    "Acme Apex Summit Northwind Bluefield Cobalt Redwood Silverline Granite Harbor Meridian Pinnacle "
    "Keystone Evergreen Lakeside Ironwood Crescent Horizon Sterling Beacon Riverside Oakmont Vantage Falcon "
    "Brightwater Clearview Westbrook Stonegate Trident Orion Polaris Cascade Juniper Highpoint Bayside"
).split()

COMPANY_KINDS = (
    "Industries",
    "Logistics",
    "Consulting",
    "Foods",
    "Manufacturing",
    "Systems",
    "Supply Co.",
    "Partners",
    "Engineering",
    "Health Services",
    "Labs",
    "Holdings",
    "Textiles",
    "Pharmaceuticals",
    "Energy",
)

COMPANY_SUFFIXES = ("Inc.", "LLC", "Ltd.", "Corp.", "Group", "")

DEPARTMENTS = (
    "Human Resources",
    "Finance",
    "Marketing",
    "Research and Development",
    "Operations",
    "Procurement",
    "Quality Assurance",
    "Customer Service",
    "Legal",
    "Facilities",
    "Information Technology",
    "Sales",
)

JOB_TITLES = (
    "Director of Operations",
    "Chief Financial Officer",
    "Project Manager",
    "Senior Analyst",
    "Head of Procurement",
    "Vice President, Sales",
    "Office Manager",
    "Research Scientist",
    "Quality Manager",
    "General Counsel",
    "Regional Manager",
    "Marketing Coordinator",
    "Plant Manager",
)

PRODUCTS = (
    "Copy paper (A4, 500 sheets)",
    "Toner cartridge",
    "Desk lamp",
    "Office chair",
    "USB-C cable",
    "Wireless mouse",
    "Monitor stand",
    "Filing cabinet",
    "Printer service",
    "Consulting hours",
    "Safety gloves",
    "Cleaning supplies",
    "Label printer",
    "Whiteboard markers",
    "Laptop bag",
    "Network switch",
    "Conference phone",
    "Stapler",
    "Binder clips",
    "Software license",
    "Hard hat",
    "Extension cord",
    "Packing tape",
    "Shipping boxes",
    "Training session",
)

GROCERIES = (
    "Milk 1L",
    "Whole wheat bread",
    "Eggs (12)",
    "Bananas",
    "Cheddar cheese",
    "Orange juice",
    "Coffee beans",
    "Pasta 500g",
    "Tomato sauce",
    "Olive oil",
    "Chicken breast",
    "Rice 2kg",
    "Apples",
    "Yogurt",
    "Butter",
    "Green tea",
    "Dish soap",
    "Paper towels",
    "Granola",
    "Carrots",
    "Sparkling water",
    "Dark chocolate",
)

STORES = (
    "FreshMart",
    "Corner Grocer",
    "Green Basket",
    "Daily Needs",
    "Harvest Market",
    "QuickStop",
    "Sunrise Foods",
    "Value Mart",
    "City Pantry",
    "Maple Market",
)

PROJECT_NAMES = (
    "Project Atlas",
    "Project Beacon",
    "Project Cedar",
    "Project Delta",
    "Project Ember",
    "Project Falcon",
    "Project Granite",
    "Project Harbor",
    "Project Iris",
    "Project Juniper",
    "Project Kestrel",
    "Project Lumen",
    "Project Mosaic",
    "Project Nova",
    "Project Orchid",
    "Project Prism",
)

FACILITIES = (
    "warehouse",
    "training centre",
    "laboratory",
    "service depot",
    "regional office",
    "distribution hub",
    "customer help desk",
    "data centre",
    "assembly line",
)

TOPICS = (
    "quarterly budget",
    "safety inspection",
    "supplier review",
    "product launch",
    "office relocation",
    "annual audit",
    "staff training",
    "energy savings",
    "customer survey",
    "inventory count",
)

MONTHS = ("January February March April May June July August September October November December").split()

COUNTRIES = (
    "Canada",
    "Mexico",
    "Brazil",
    "Argentina",
    "Germany",
    "France",
    "Spain",
    "Italy",
    "Poland",
    "Sweden",
    "Norway",
    "Kenya",
    "Nigeria",
    "Egypt",
    "India",
    "Japan",
    "Vietnam",
    "Australia",
    "Chile",
    "Peru",
    "Portugal",
    "Ireland",
    "Greece",
    "Turkey",
    "Thailand",
    "Indonesia",
    "Morocco",
    "Ghana",
)


def pick(rng: np.random.Generator, pool, k: int | None = None):
    """One item of ``pool`` (or ``k`` distinct items, as a list)."""
    if k is None:
        return pool[int(rng.integers(len(pool)))]
    idx = rng.choice(len(pool), size=k, replace=False)
    return [pool[int(i)] for i in idx]


def person(rng: np.random.Generator) -> str:
    """A full name such as ``Maria Lopez``."""
    return f"{pick(rng, FIRST_NAMES)} {pick(rng, LAST_NAMES)}"


def company(rng: np.random.Generator) -> str:
    """A company name such as ``Granite Logistics Inc.``."""
    kind = pick(rng, COMPANY_KINDS)
    suffix = "" if kind.endswith(".") else pick(rng, COMPANY_SUFFIXES)
    return " ".join(p for p in (pick(rng, COMPANY_WORDS), kind, suffix) if p)


def address(rng: np.random.Generator) -> tuple[str, str]:
    """(street line, city line), e.g. ``('482 Oak Avenue', 'Madison, WI 53703')``."""
    city, state, zipc = pick(rng, CITIES)
    return f"{int(rng.integers(10, 9900))} {pick(rng, STREETS)}", f"{city}, {state} {zipc}"


def phone(rng: np.random.Generator) -> str:
    return f"({int(rng.integers(201, 990))}) {int(rng.integers(200, 999))}-{int(rng.integers(0, 10000)):04d}"


def email(name: str, org: str) -> str:
    first, last = name.lower().split()[:2]
    domain = "".join(ch for ch in org.split()[0].lower() if ch.isalnum())
    return f"{first[0]}.{last}@{domain}.com"


def date(rng: np.random.Generator, start_year: int = 2015, end_year: int = 2024) -> _dt.date:
    """A uniformly random calendar date between two years (inclusive)."""
    start = _dt.date(start_year, 1, 1).toordinal()
    end = _dt.date(end_year, 12, 31).toordinal()
    return _dt.date.fromordinal(int(rng.integers(start, end + 1)))


DATE_STYLES = ("long", "short_us", "iso", "day_month", "abbrev")


def format_date(d: _dt.date, style: str) -> str:
    """A date as printed on documents in one of :data:`DATE_STYLES`."""
    if style == "long":
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if style == "short_us":
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    if style == "iso":
        return d.isoformat()
    if style == "day_month":
        return f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    if style == "abbrev":
        return f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}"
    raise ValueError(f"unknown date style {style!r}; valid: {', '.join(DATE_STYLES)}")


def date_answers(d: _dt.date, printed: str) -> tuple[str, ...]:
    """The printed date first, then the other common spellings of the same day."""
    others = [format_date(d, s) for s in DATE_STYLES]
    return tuple(dict.fromkeys([printed, *others]))


def money(value: float, decimals: int = 2, symbol: str = "$") -> str:
    """``1234.5`` -> ``$1,234.50``; negatives in parentheses as financial statements print them."""
    body = f"{abs(value):,.{decimals}f}"
    text = f"{symbol}{body}"
    return f"({text})" if value < 0 else text


def money_answers(value: float, printed: str, decimals: int = 2) -> tuple[str, ...]:
    """The printed amount first, then spellings a reader may reasonably give for the same amount."""
    plain = f"{abs(value):.{decimals}f}"
    comma = f"{abs(value):,.{decimals}f}"
    variants = [printed, comma, plain, f"${comma}"]
    if decimals and float(plain) == int(abs(value)):
        variants += [f"{int(abs(value)):,}", str(int(abs(value))), f"${int(abs(value)):,}"]
    if value < 0:
        variants = [printed] + [f"-{v}" for v in variants[1:]] + [f"({v})" for v in variants[1:]]
    return tuple(dict.fromkeys(variants))


def number_answers(value: float, decimals: int = 0) -> tuple[str, ...]:
    """A plain number as digits (ChartQA style), with and without thousands separators."""
    if decimals == 0 or float(value).is_integer():
        v = int(round(value))
        return tuple(dict.fromkeys([str(v), f"{v:,}"]))
    return tuple(dict.fromkeys([f"{value:.{decimals}f}", f"{value:,.{decimals}f}"]))
