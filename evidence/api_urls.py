from rest_framework.routers import SimpleRouter

from evidence.apis import StudyViewSet

router = SimpleRouter()
router.register("studies", StudyViewSet, basename="study")

urlpatterns = router.urls
