from django.http import HttpRequest, HttpResponse


def library(request: HttpRequest) -> HttpResponse:
    raise NotImplementedError


def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    raise NotImplementedError
