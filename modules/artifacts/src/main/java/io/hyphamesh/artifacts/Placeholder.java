package io.hyphamesh.artifacts; public final class Placeholder {}
