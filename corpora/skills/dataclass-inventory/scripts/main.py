import json
import sys
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import List


class Level(str, Enum):
    OK = "ok"
    LOW = "low"
    OUT = "out"


@dataclass(order=True)
class Item:
    sku: str
    qty: int
    minimum: int = 5
    tags: List[str] = field(default_factory=list)

    def level(self) -> Level:
        if self.qty == 0:
            return Level.OUT
        return Level.LOW if self.qty < self.minimum else Level.OK


items = sorted(Item(**i) for i in json.load(sys.stdin)["items"])
print(json.dumps({
    "levels": {i.sku: i.level().value for i in items},
    "reorder": [asdict(i) for i in items if i.level() is not Level.OK],
}))
