from django.urls import path
from rest_framework.routers import SimpleRouter

from evidence.apis import ClaimCheckApi, ClaimCheckSlashApi, StudyViewSet

router = SimpleRouter()
router.register("studies", StudyViewSet, basename="study")

urlpatterns = [
    # The documented contract has no trailing slash.
    path("claims/check", ClaimCheckApi.as_view(), name="evidence-api-claims-check"),
    path("claims/check/", ClaimCheckSlashApi.as_view(), name="evidence-api-claims-check-slash"),
    *router.urls,
]
