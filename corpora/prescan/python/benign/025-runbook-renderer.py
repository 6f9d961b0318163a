# benign: renders a runbook as text; the shell commands (os.system, subprocess.run) are only strings shown to a human.
# sample-input: {"service": "billing", "steps": ["check the socket backlog", "restart the worker"]}
import json
import sys

COMMANDS = {
    "check the socket backlog": "ss -ltn 'sport = :8080'",
    "restart the worker": "systemctl restart billing-worker",
}

WARNING = "Never paste these into os.system() or subprocess.run(shell=True); run them by hand."


def main():
    data = json.load(sys.stdin)
    lines = [f"# Runbook: {data.get('service', 'unknown')}", WARNING]
    for n, step in enumerate(data.get("steps", []), 1):
        lines.append(f"{n}. {step}")
        if step in COMMANDS:
            lines.append(f"   $ {COMMANDS[step]}")
    print(json.dumps({"runbook": "\n".join(lines)}))


if __name__ == "__main__":
    main()
