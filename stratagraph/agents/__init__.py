"""Agent node functions (classify, decompose, think, plan, reason, reflect, screen, aggregate, answer)."""
