"""Adapter: mini-swe-agent 2.x (and Live-SWE-Agent, its config) writes a repository from the task's documents.

Run inside the sandbox with the system's own Python as ``python mini_swe_agent.py --docs DOCS --out OUT`` (the
adapter contract in docs/external-systems.md). It imports nothing of projectgen, only `contract` beside it, on
purpose: it runs in mini-swe-agent's environment, where projectgen is not installed, and it imports
mini-swe-agent only inside `run_agent` (its tests import this file without the package).

Which config runs is ``PROJECTGEN_MSWEA_CONFIG`` (systems.toml's ``[NAME.env]``): ``mini`` is mini-swe-agent's
own text-based config (``mini_textbased.yaml``, shipped in the package), ``live-swe-agent`` is
Live-SWE-Agent's ``config/livesweagent.yaml`` (written for mini-swe-agent 1.x) ported to 2.x below. Both
parse actions from text: the model bridge refuses tool calls, and mini-swe-agent 2.x's default
(``mini.yaml``) asks for its bash tool as a tool call.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contract import AdapterError, Settings, documents_text, read_documents, read_settings, run_adapter

CONFIG_VARIABLE = "PROJECTGEN_MSWEA_CONFIG"

# Live-SWE-Agent 1.0.0 (github.com/OpenAutoCoder/live-swe-agent, config/livesweagent.yaml at 8d7dd86), ported
# to mini-swe-agent 2.x by its v2 migration guide; every prompt's text is as published. What changed:
# - agent.action_observation_template -> model.observation_template, agent.format_error_template ->
#   model.format_error_template, and the 1.x action regex (```bash blocks) is set as model.action_regex,
#   since 2.x moved these to the model and its text-based default regex is ```mswea_bash_command;
# - model.model_class: litellm_textbased (1.x parsed text; 2.x's default model asks for a tool call);
# - 2.x has no timeout_template: a command that timed out reaches the model through the observation's
#   output.exception_info, so the observation template starts with mini-swe-agent 2.x's own
#   exception line (without it the model would see returncode -1 and no reason);
# - agent.mode: confirm is dropped: it belongs to the interactive agent, and the adapter runs the
#   non-interactive DefaultAgent (no one is there to confirm).
LIVE_SWE_AGENT_CONFIG = r'''
agent:
  system_template: |
    You are a helpful assistant that can interact with a computer.

    Your response must contain exactly ONE bash code block with ONE command (or commands connected with && or ||).
    Include a THOUGHT section before your command where you explain your reasoning process.
    Format your response as shown in <format_example>.

    <format_example>
    Your reasoning and analysis here. Explain why you want to perform the action.

    ```bash
    your_command_here
    ```
    </format_example>

    Failure to follow these rules will cause your response to be rejected.
  instance_template: |
    Please solve this issue: {{task}}

    You can execute bash commands and edit files to implement the necessary changes.

    ## Recommended Workflow

    This workflows should be done step-by-step so that you can iterate on your changes and any possible problems.

    1. Analyze the codebase by finding and reading relevant files
    2. Create a script to reproduce the issue
    3. Edit the source code to resolve the issue
    4. Verify your fix works by running your script again
    5. Test edge cases to ensure your fix is robust
    6. Submit your changes and finish your work by issuing the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.
       Do not combine it with any other command. <important>After this command, you cannot continue working on this task.</important>

    ## Important Rules

    1. Every response must contain exactly one action
    2. The action must be enclosed in triple backticks
    3. Directory or environment variable changes are not persistent. Every action is executed in a new subshell.
       However, you can prefix any action with `MY_ENV_VAR=MY_VALUE cd /path/to/working/dir && ...` or write/load environment variables from files

    <system_information>
    {{system}} {{release}} {{version}} {{machine}}
    </system_information>

    ## Formatting your response

    Here is an example of a correct response:

    <example_response>
    THOUGHT: I need to understand the structure of the repository first. Let me check what files are in the current directory to get a better understanding of the codebase.

    ```bash
    ls -la
    ```
    </example_response>

    ## Useful command examples

    ### Create a new file:

    ```bash
    cat <<'EOF' > newfile.py
    import numpy as np
    hello = "world"
    print(hello)
    EOF
    ```

    ### Edit files with sed:

    {%- if system == "Darwin" -%}
    <important>
    You are on MacOS. For all the below examples, you need to use `sed -i ''` instead of `sed -i`.
    </important>
    {%- endif -%}

    ```bash
    # Replace all occurrences
    sed -i 's/old_string/new_string/g' filename.py

    # Replace only first occurrence
    sed -i 's/old_string/new_string/' filename.py

    # Replace first occurrence on line 1
    sed -i '1s/old_string/new_string/' filename.py

    # Replace all occurrences in lines 1-10
    sed -i '1,10s/old_string/new_string/g' filename.py
    ```

    ### View file content:

    ```bash
    # View specific lines with numbers
    nl -ba filename.py | sed -n '10,20p'
    ```

    ### Any other command you want to run

    ```bash
    anything
    ```

    ## Creating your own tools 
    - You can also create your own tools in Python to help with your workflow
    - Compared to basic bash commands, the tools you create should be able to better aid your workflow in solving the task
    - Ensure each tool you create is in Python, contains informative outputs or error messages, and can be ran from the command line
    - You should at least create a simple edit tool that can help you effectively edit arbitrary files instead of using bash commands
    - The tools you create can be for any purpose, it does not need to be general, instead think about how it can help you specifically with the current task at hand

    ### Example of creating a custom tool:
    <example_response>
    THOUGHT: I noticed that in order to solve the issue I need to ... therefore I should create a custom tool to help me ...

    ```bash
    cat <<'EOF' > /path/to/tool_name.py
    #!/usr/bin/env python3
    import sys
    # Import other packages if needed

    def main():
        # Your tool logic here
        ...

    if __name__ == "__main__":
        main()
    EOF
    ```
    </example_response>

    ### Example of using the tool you created:
    <example_response>
    THOUGHT: Let me use the custom tool I created to help me with ...

    ```bash
    python /path/to/tool_name.py <<EOF
    your_input_here
    EOF
    ```
    </example_response>
  step_limit: 0
  cost_limit: 3.
environment:
  env:
    PAGER: cat
    MANPAGER: cat
    LESS: -R
    PIP_PROGRESS_BAR: 'off'
    TQDM_DISABLE: '1'
model:
  model_class: litellm_textbased
  action_regex: "```bash\\s*\\n(.*?)\\n```"
  observation_template: |
    {% if output.exception_info -%}
    <exception>{{output.exception_info}}</exception>
    {% endif -%}
    <returncode>{{output.returncode}}</returncode>
    {% if output.output | length < 10000 -%}
    <output>
    {{ output.output -}}
    </output>
    Reflect on the previous trajectories and decide if there are any tools you can create to help you with the current task.
    Note that just because you can use basic bash commands doesn't mean you should not create any tools that can still be helpful.
    {%- else -%}
    <warning>
    The output of your last command was too long.
    Please try a different command that produces less output.
    If you're looking at a file you can try use head, tail, sed or create a tool to view a smaller number of lines selectively.
    If you're using grep or find and it produced too much output, you can use a more selective search pattern.
    </warning>
    {%- set elided_chars = output.output | length - 10000 -%}
    <output_head>
    {{ output.output[:5000] }}
    </output_head>
    <elided_chars>
    {{ elided_chars }} characters elided
    </elided_chars>
    <output_tail>
    {{ output.output[-5000:] }}
    </output_tail>
    {%- endif -%}
  format_error_template: |
    Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.
    If you want to end the task, please issue the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`
    without any other command.
    Else, please format your response exactly as follows:

    <response_example>
    Here are some thoughts about why you want to perform the action.

    ```bash
    <action>
    ```
    </response_example>

    Note: In rare cases, if you need to reference a similar format in your command, you might have
    to proceed in two steps, first writing TRIPLEBACKTICKSBASH, then replacing them with ```bash.
  model_kwargs:
    temperature: 0.0
    drop_params: true
'''

TASK_PREAMBLE = (
    "Implement the software project specified by the documents below (its PRD, UML and architecture "
    "design) as a complete repository in the current working directory, {out}: create every source file "
    "the design names at the paths it gives.\n\n"
)


def task_text(documents: Sequence[tuple[str, str]], out: Path) -> str:
    return TASK_PREAMBLE.format(out=out) + documents_text(documents)


def merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`update` over `base`, nested mappings merged key by key (as mini-swe-agent merges its configs)."""
    merged = copy.deepcopy(dict(base))
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def sampling_kwargs(settings: Settings) -> dict[str, Any]:
    """The sampling values sent, as litellm's keyword arguments (one not sent keeps the config's)."""
    values = {"temperature": settings.temperature, "top_p": settings.top_p, "max_tokens": settings.max_tokens}
    return {key: value for key, value in values.items() if value is not None}


def run_overrides(settings: Settings, out: Path, trajectory: Path) -> dict[str, Any]:
    """What the adapter sets over either config: the bridge as an OpenAI-compatible endpoint, the paper's
    sampling, cost tracking off (litellm has no price for a local model name, and mini-swe-agent stops on
    an unknown price by default), the repository folder as the working directory, the trajectory file."""
    return {
        "agent": {"output_path": str(trajectory)},
        "environment": {"cwd": str(out)},
        "model": {
            "model_name": f"openai/{settings.model}",
            "cost_tracking": "ignore_errors",
            "model_kwargs": {"api_base": settings.base_url, "api_key": settings.api_key, "drop_params": True,
                             **sampling_kwargs(settings)},
        },
    }


def choose_config(name: str, load_yaml: Any, builtin_dir: Path | None) -> dict[str, Any]:
    """The named config as a dict: `load_yaml` is yaml.safe_load, `builtin_dir` mini-swe-agent's config folder."""
    if name == "live-swe-agent":
        return load_yaml(LIVE_SWE_AGENT_CONFIG)
    if name == "mini":
        if builtin_dir is None:
            raise AdapterError("mini-swe-agent's config folder is unknown")
        config = load_yaml((builtin_dir / "mini_textbased.yaml").read_text())
        config["agent"].pop("mode", None)  # the interactive agent's setting; the run is not interactive
        return merge(config, {"model": {"model_class": "litellm_textbased"}})
    raise AdapterError(f"{CONFIG_VARIABLE} must be 'mini' or 'live-swe-agent', not {name!r}")


def run_agent(config: Mapping[str, Any], task: str) -> dict[str, Any]:
    """Run mini-swe-agent's non-interactive DefaultAgent with `config`; its exit information."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments import get_environment
    from minisweagent.models import get_model

    model = get_model(config=dict(config["model"]))
    environment = get_environment(dict(config.get("environment", {})), default_type="local")
    agent_config = {key: value for key, value in config["agent"].items() if key != "agent_class"}
    return DefaultAgent(model, environment, **agent_config).run(task)


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = read_documents(args.docs)
    config_name = os.environ.get(CONFIG_VARIABLE, "mini")
    import yaml
    from minisweagent.config import builtin_config_dir

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    trajectory = Path(os.environ.get("TMPDIR", "/tmp")) / "mini-swe-agent.traj.json"
    config = merge(choose_config(config_name, yaml.safe_load, builtin_config_dir),
                   run_overrides(settings, out, trajectory))
    result = run_agent(config, task_text(documents, out))
    exit_status = result.get("exit_status", "")
    print(json.dumps({"config": config_name, "exit_status": exit_status}), file=sys.stderr)
    if not any(path.is_file() for path in out.rglob("*")):
        print(f"mini-swe-agent adapter: the agent ended ({exit_status}) without writing a file", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("mini-swe-agent", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
