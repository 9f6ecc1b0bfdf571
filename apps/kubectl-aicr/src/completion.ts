/** Shell completion scripts for `kubectl-aicr`: both ask the plugin itself (`kubectl-aicr __complete …`). */
export const completionScript = (shell: "bash" | "zsh"): string =>
  shell === "bash"
    ? `# bash completion for kubectl-aicr: source <(kubectl aicr completion bash)
_kubectl_aicr() {
  local out directive
  out=$(kubectl-aicr __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return
  directive=\${out##*:}
  COMPREPLY=($(compgen -W "$(printf '%s\\n' "$out" | sed '$d')" -- "\${COMP_WORDS[COMP_CWORD]}"))
  [[ $directive == 0 && \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -F _kubectl_aicr kubectl-aicr
`
    : `#compdef kubectl-aicr
# zsh completion for kubectl-aicr: source <(kubectl aicr completion zsh)
_kubectl_aicr() {
  local -a candidates
  candidates=("\${(@f)$(kubectl-aicr __complete "\${(@)words[2,CURRENT]}" 2>/dev/null | sed '$d')}")
  compadd -a candidates
}
compdef _kubectl_aicr kubectl-aicr
`
