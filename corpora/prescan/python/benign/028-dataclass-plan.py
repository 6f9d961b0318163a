# benign: builds a task plan with dataclasses; the Plan class has an execute() method that only sorts tasks.
# sample-input: {"tasks": [{"name": "load", "priority": 2, "minutes": 5}, {"name": "clean", "priority": 1, "minutes": 12}, {"name": "report", "priority": 3, "minutes": 3}]}
import json
import sys
from dataclasses import asdict, dataclass, field


@dataclass(order=True)
class Task:
    priority: int
    name: str = field(compare=False)
    minutes: int = field(default=0, compare=False)


@dataclass
class Plan:
    tasks: list

    def execute(self):
        clock, schedule = 0, []
        for task in sorted(self.tasks):
            schedule.append({"start": clock, **asdict(task)})
            clock += task.minutes
        return schedule, clock


def main():
    data = json.load(sys.stdin)
    plan = Plan([Task(t["priority"], t["name"], t.get("minutes", 0)) for t in data.get("tasks", [])])
    schedule, total = plan.execute()
    print(json.dumps({"schedule": schedule, "total_minutes": total}))


if __name__ == "__main__":
    main()
