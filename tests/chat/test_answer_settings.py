import pytest
from django.core.exceptions import ImproperlyConfigured
from pydantic import ValidationError

from chat.answer_settings import AnswerSettings, answer_settings


def test_every_field_has_a_default_and_a_description():
    defaults = AnswerSettings()
    for name, field in AnswerSettings.model_fields.items():
        assert field.description, name
        assert getattr(defaults, name) == field.default


def test_unknown_keys_are_rejected():
    with pytest.raises(ValidationError, match="retrieval_kk"):
        AnswerSettings(retrieval_kk=5)


def test_short_hash_is_stable_and_changes_with_any_value():
    assert AnswerSettings().short_hash() == AnswerSettings().short_hash()
    assert len(AnswerSettings().short_hash()) == 12
    assert AnswerSettings(retrieval_k=11).short_hash() != AnswerSettings().short_hash()


def test_settings_come_from_django_settings_then_answer_settings_json_then_overrides(settings):
    settings.LLM_PROVIDER = "openai"
    settings.LLM_MODEL = "qwen2.5"
    settings.ANSWER_SETTINGS = {"retrieval_k": 20, "judge_threshold": 0.4}
    effective = answer_settings(judge_threshold=0.5)
    assert (effective.provider, effective.model, effective.retrieval_k, effective.judge_threshold) == (
        "openai",
        "qwen2.5",
        20,
        0.5,
    )


def test_invalid_settings_fail_with_a_message_naming_the_key(settings):
    settings.ANSWER_SETTINGS = {"retrieval_k": 0, "colour": "blue"}
    with pytest.raises(ImproperlyConfigured) as raised:
        answer_settings()
    message = str(raised.value)
    assert "retrieval_k: Input should be greater than or equal to 1" in message
    assert "colour: Extra inputs are not permitted" in message
    assert message.endswith("valid keys are: " + ", ".join(AnswerSettings.model_fields) + ".")


def test_system_check_reports_invalid_settings(settings):
    from chat.checks import answer_settings_check

    assert answer_settings_check() == []
    settings.ANSWER_SETTINGS = {"repair_max_sources": 9}
    [error] = answer_settings_check()
    assert error.id == "chat.E001"
    assert "repair_max_sources: Input should be less than or equal to 5" in error.msg
