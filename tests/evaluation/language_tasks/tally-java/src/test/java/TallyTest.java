import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

public class TallyTest {

    @Test
    public void anUnknownNameCountsZero() {
        assertThat(new Tally().count("x")).isEqualTo(0);
    }

    @Test
    public void addingCounts() {
        Tally tally = new Tally();
        tally.add("a");
        tally.add("a");
        assertThat(tally.count("a")).isEqualTo(2);
    }

    @Test
    public void topIsTheFirstOfEqualCounts() {
        Tally tally = new Tally();
        tally.add("b");
        tally.add("a");
        tally.add("a");
        tally.add("b");
        assertThat(tally.top()).isEqualTo("b");
    }

    @Test
    public void aBlankNameIsRefused() {
        assertThatThrownBy(() -> new Tally().add(" ")).isInstanceOf(IllegalArgumentException.class);
    }
}
