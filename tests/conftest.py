"""Shared test configuration: hypothesis profiles (small by default, larger under -m slow)."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("slow", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
