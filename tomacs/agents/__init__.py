"""Agents: role pools per benchmark, prompts (f_v, f_m, adversarial, decision), the adversary schedule."""

from tomacs.agents.adversary import AdversarySchedule, count_from_rate
from tomacs.agents.prompts import (
    ANSWER_FORMAT,
    PERSUASIVE_SUFFIX,
    add_persuasive_suffix,
    adversarial_messages,
    agent_messages,
    answer_format,
    decision_messages,
    format_message,
    format_question,
)
from tomacs.agents.roles import POOLS, ROLES, Role, assign_roles, base_role, get_role, role_pool, role_profile

__all__ = [
    "ANSWER_FORMAT",
    "PERSUASIVE_SUFFIX",
    "POOLS",
    "ROLES",
    "AdversarySchedule",
    "Role",
    "add_persuasive_suffix",
    "adversarial_messages",
    "agent_messages",
    "answer_format",
    "assign_roles",
    "base_role",
    "count_from_rate",
    "decision_messages",
    "format_message",
    "format_question",
    "get_role",
    "role_pool",
    "role_profile",
]
