"""What stands between the model and the machine: the approval gate and the kernel wall.

`approval` is the `Approver` interface and the policy (modes, rules); `commands` reads a shell
command as bash would (`shell_parse`, `option_specs`, `safe_commands`, `safe_git`, `interactive`)
and says what it touches; `git_config`, `committed_secrets` and `folder_reads` answer the
questions about repositories and secrets a verdict needs; `sensitive`, `secrets`, `own_secrets`
and `textsafe` keep secrets and control sequences out of reach; `planting` says which project
files make tools run code (writing one asks); `sandbox` confines every command
(Landlock and namespaces); `own_programs` is the one way the agent runs programs for itself.
"""
