package io.hyphamesh.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The {@code --cluster} options: defaults, and bad values refused before anything starts. */
class ClusterOptionsTest {

    @Test
    void clusterScenariosAreOffUnlessAskedFor() {
        Options o = Options.parse(new String[] {"--quick"});
        assertEquals(0, o.cluster());
        assertEquals(2, o.clusterKills(), "quick runs kill twice");
        assertEquals(10, Options.parse(new String[] {}).clusterKills(), "full runs kill ten times");
    }

    @Test
    void clusterTakesServersAndKills() {
        Options o = Options.parse(new String[] {"--cluster", "3", "--cluster-kills", "12", "--only", "cluster"});
        assertEquals(3, o.cluster());
        assertEquals(12, o.clusterKills());
        assertEquals(true, o.selected("cluster.failover"));
        assertEquals(false, o.anySelected("rpc"), "--only cluster runs no other scenario");
    }

    @Test
    void badClusterValuesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--cluster", "1"}),
                "one server has nothing to fail over to");
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--cluster", "10"}));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--cluster", "3",
                "--cluster-kills", "0"}));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--cluster", "3",
                "--server", "http://127.0.0.1:8080", "--root-token", "t"}), "the harness starts the cluster itself");
        assertThrows(NumberFormatException.class, () -> Options.parse(new String[] {"--cluster", "three"}));
    }

    @Test
    void theHarnessCarriesThePostgresDriverItsClusterScenariosUse() throws Exception {
        // ClusterTarget creates each run's databases over JDBC; without the driver on the harness's
        // runtime class path a fresh build's cluster scenarios stopped at "No suitable driver"
        assertNotNull(java.sql.DriverManager.getDriver("jdbc:postgresql://127.0.0.1:5432/postgres"));
    }
}
